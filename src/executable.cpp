#include "executable.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "errors.hpp"

namespace rcoord {
namespace {

int file_errno(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno == ENOTDIR ? ENOENT : errno;
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) return EACCES;
  return 0;
}

// What the search found: the file (error 0), or the errno execvp would end with.
struct Found {
  int error = ENOENT;
  std::string path;
};

// As execvp searches: each directory of $PATH in turn (an empty one is the current
// directory). The first executable file is the one; a candidate that exists but cannot be
// executed makes the end result EACCES, when no later one can be.
Found find_executable(const std::string& command) {
  if (command.empty()) return {};
  if (command.find('/') != std::string::npos) {
    int e = file_errno(command);
    return {e, e == 0 ? command : std::string()};
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/bin:/usr/bin";
  Found found;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = std::min(dirs.find(':', start), dirs.size());
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
    int e = file_errno(candidate);
    if (e == 0) return {0, std::move(candidate)};
    if (e == EACCES) found.error = EACCES;
    start = end + 1;
  }
  return found;
}

const Found& found_executable(const std::string& command) {
  static std::map<std::string, Found> known;
  auto it = known.find(command);
  if (it == known.end()) it = known.emplace(command, find_executable(command)).first;
  return it->second;
}

}  // namespace

int executable_errno(const std::string& command) { return found_executable(command).error; }

const std::string& executable_path(const std::string& command) {
  return found_executable(command).path;
}

void check_executable(const std::string& command) {
  int e = executable_errno(command);
  if (e == 0) return;
  throw Error(e == ENOENT ? kNotFound : kCannotExecute,
              fmt::format("cannot run '{}': {}", command, std::strerror(e)),
              "check the command and PATH; nothing was taken");
}

}  // namespace rcoord
