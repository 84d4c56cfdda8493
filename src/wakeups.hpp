#pragma once
/// What a supervisor waits for, in one wait: a signal of a set, input on some sockets (a
/// lease's loss watch, loss_watch.hpp), or a deadline. The signals stay blocked, as
/// sigtimedwait(2) needs them; a signalfd makes them one more thing poll(2) sees.

#include <chrono>
#include <csignal>
#include <span>

namespace rcoord {

class Wakeups {
 public:
  /// Throws Error(kServer) when the kernel gives no signalfd (out of file descriptors).
  explicit Wakeups(const sigset_t& signals);
  ~Wakeups();
  Wakeups(const Wakeups&) = delete;
  Wakeups& operator=(const Wakeups&) = delete;

  /// What ended a wait: a signal (taken, as sigtimedwait takes it), input on a socket, or
  /// neither (the deadline came).
  struct Woken {
    int signal = 0;
    bool input = false;
  };

  /// Waits until `deadline` at the latest. A signal pending comes first. Sockets of -1 are
  /// left out.
  Woken wait(std::chrono::steady_clock::time_point deadline, std::span<const int> sockets);

 private:
  int fd_;
};

}  // namespace rcoord
