#include "wakeups.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "errors.hpp"

namespace rcoord {
namespace {

using Clock = std::chrono::steady_clock;

timespec to_timespec(Clock::duration d) {
  auto ns =
      std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

}  // namespace

Wakeups::Wakeups(const sigset_t& signals)
    : fd_(signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK)) {
  if (fd_ < 0) {
    throw Error(kServer, fmt::format("cannot wait for signals: {}", std::strerror(errno)),
                "check the limit of open files (ulimit -n)");
  }
}

Wakeups::~Wakeups() { ::close(fd_); }

Wakeups::Woken Wakeups::wait(Clock::time_point deadline, std::span<const int> sockets) {
  std::vector<pollfd> polled{{fd_, POLLIN, 0}};
  for (int fd : sockets) polled.push_back({fd, POLLIN, 0});
  for (;;) {
    signalfd_siginfo info{};
    if (::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      return {static_cast<int>(info.ssi_signo), false};
    }
    timespec left = to_timespec(deadline - Clock::now());
    int ready = ppoll(polled.data(), polled.size(), &left, nullptr);
    if (ready == 0) return {};
    if (ready < 0) {
      if (errno == EINTR) continue;  // a handled signal outside the set
      throw Error(kServer, fmt::format("cannot wait: {}", std::strerror(errno)));
    }
    // A signal is read at the loop's top; input is the caller's to read.
    bool input = std::any_of(polled.begin() + 1, polled.end(),
                             [](const pollfd& p) { return p.revents != 0; });
    if (input) return {0, true};
  }
}

}  // namespace rcoord
