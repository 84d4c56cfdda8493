#include "notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

namespace rcoord::notify {
namespace {

// What adopt_environment() took out of the environment.
struct Adopted {
  std::string socket;
  bool watchdog = false;
};
Adopted& adopted() {
  static Adopted state;
  return state;
}

// The address of $NOTIFY_SOCKET and its length; false when it names none that fits.
bool address_of(std::string_view path, sockaddr_un& addr, socklen_t& length) {
  if (path.empty() || path.size() >= sizeof addr.sun_path) return false;
  if (path.front() != '/' && path.front() != '@') return false;
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  // `@name` is an abstract socket: a leading NUL, and the length counts the name exactly.
  if (path.front() == '@') addr.sun_path[0] = '\0';
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() +
                                  (path.front() == '@' ? 0 : 1));
  return true;
}

}  // namespace

void adopt_environment() {
  Adopted& state = adopted();
  if (const char* socket = std::getenv("NOTIFY_SOCKET"); socket != nullptr) state.socket = socket;
  const char* usec = std::getenv("WATCHDOG_USEC");
  const char* pid = std::getenv("WATCHDOG_PID");
  state.watchdog = usec != nullptr && *usec != '\0' &&
                   (pid == nullptr || *pid == '\0' || std::strtol(pid, nullptr, 10) == getpid());
  for (const char* name : {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"}) unsetenv(name);
}

bool active() { return !adopted().socket.empty(); }

bool watchdog_wanted() { return active() && adopted().watchdog; }

bool send(std::string_view message) {
  sockaddr_un addr{};
  socklen_t length = 0;
  if (!address_of(adopted().socket, addr, length)) return false;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ssize_t sent = sendto(fd, message.data(), message.size(), MSG_NOSIGNAL,
                        reinterpret_cast<const sockaddr*>(&addr), length);
  close(fd);
  return sent == static_cast<ssize_t>(message.size());
}

std::string status(std::string_view text) {
  std::string out = "STATUS=";
  for (char c : text) out += c == '\n' ? ' ' : c;
  return out;
}

}  // namespace rcoord::notify
