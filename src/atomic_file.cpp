#include "atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "errors.hpp"
#include "fd_io.hpp"

namespace rcoord {
namespace {

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

mode_t readable_mode() {
  mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void replace_file(const std::string& path, std::string_view content) {
  if (path.empty() || path.back() == '/') {
    throw Error(kUsage, fmt::format("bad file name '{}'", path), "name a file, e.g. rcoord.prom");
  }
  std::string pattern = directory_of(path) + "/." + base_of(path) + ".XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    throw Error(kUsage,
                fmt::format("cannot write {}: cannot create a file in {}: {}", path,
                            directory_of(path), std::strerror(errno)),
                "check that the directory exists and that this user may write in it");
  }
  auto fail = [&](const char* what) {
    int err = errno;
    ::close(fd);
    ::unlink(name.data());
    throw Error(kConnection, fmt::format("cannot write {}: {}: {}", path, what, std::strerror(err)),
                "check the disk: space, quota, errors");
  };
  if (!write_fully(fd, content)) fail("write");
  if (::fchmod(fd, readable_mode()) != 0) fail("chmod");
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(name.data());
    throw Error(kConnection, fmt::format("cannot write {}: close: {}", path, std::strerror(err)),
                "check the disk: space, quota, errors");
  }
  if (::rename(name.data(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(name.data());
    throw Error(kUsage, fmt::format("cannot write {}: rename: {}", path, std::strerror(err)),
                "check that the path names a file in that directory, not a directory");
  }
}

}  // namespace rcoord
