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

// What a file of mode `mode` is, for a message ("a symbolic link").
const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

mode_t readable_mode() {
  mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void check_replaceable(const std::string& path) {
  if (path.empty() || path.back() == '/') {
    throw Error(kUsage, fmt::format("bad file name '{}'", path), "name a file, e.g. rcoord.prom");
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  throw Error(kUsage,
              fmt::format("cannot write {}: it is {}, which a rename would replace with a plain "
                          "file",
                          path, kind_of(st.st_mode)),
              "name a regular file or a new one, e.g. rcoord.prom in the collector's directory");
}

void replace_file(const std::string& path, std::string_view content) {
  check_replaceable(path);
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
  // Something other than a file may have appeared there meanwhile: it is left alone.
  try {
    check_replaceable(path);
  } catch (const Error&) {
    ::unlink(name.data());
    throw;
  }
  if (::rename(name.data(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(name.data());
    throw Error(kUsage, fmt::format("cannot write {}: rename: {}", path, std::strerror(err)),
                "check that the path names a file in that directory, not a directory");
  }
}

}  // namespace rcoord
