#pragma once
/// Plain descriptor I/O the files and memory files rcoord writes share (sockets go through
/// Transport, which waits with a deadline).

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

namespace rcoord {

/// Writes all of `bytes` to `fd`, again after EINTR and after a short write. False when a
/// write fails (errno says why) or writes nothing.
inline bool write_fully(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace rcoord
