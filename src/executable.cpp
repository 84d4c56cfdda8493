#include "executable.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "errors.hpp"

namespace rcoord {
namespace {

int file_errno(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno == ENOTDIR ? ENOENT : errno;
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) return EACCES;
  return 0;
}

}  // namespace

int executable_errno(const std::string& command) {
  if (command.empty()) return ENOENT;
  if (command.find('/') != std::string::npos) return file_errno(command);
  // As execvp: each directory of $PATH in turn (an empty one is the current directory);
  // a candidate that exists but cannot be executed makes the end result EACCES.
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/bin:/usr/bin";
  int result = ENOENT;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = std::min(dirs.find(':', start), dirs.size());
    std::string dir = dirs.substr(start, end - start);
    int e = file_errno((dir.empty() ? "." : dir) + "/" + command);
    if (e == 0) return 0;
    if (e == EACCES) result = EACCES;
    start = end + 1;
  }
  return result;
}

void check_executable(const std::string& command) {
  int e = executable_errno(command);
  if (e == 0) return;
  throw Error(e == ENOENT ? kNotFound : kCannotExecute,
              fmt::format("cannot run '{}': {}", command, std::strerror(e)),
              "check the command and PATH; nothing was taken");
}

}  // namespace rcoord
