#pragma once
// Time in the integration tests, by the rules of tests/e2e/lib.sh: a test waits for the event
// it needs (a client seen blocked, a channel subscribed), never for a fixed time; an upper
// bound appears only where the SPEC promises one (a waiter woken at once, not by a fallback
// poll), through scaled(); a lower bound is measured from a moment taken before its cause, so
// that a slow machine can only make it longer.

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "connection.hpp"

extern char** environ;

namespace rcoord::test {

/// How much slower process start-up is here than on the quiet machine the bounds were
/// written for, as lib.sh measures it: the median of 9 start-ups of `bash -c true` against
/// 4 ms, never below 1; measured once per test process. RCOORD_MACHINE_FACTOR (a percentage)
/// overrides it.
inline double machine_factor() {
  static const double factor = [] {
    if (const char* f = std::getenv("RCOORD_MACHINE_FACTOR")) {
      return std::max(1.0, std::atof(f) / 100);
    }
    std::vector<double> micros;
    for (int i = 0; i < 9; ++i) {
      std::string bash = "bash", flag = "-c", command = "true";
      char* argv[] = {bash.data(), flag.data(), command.data(), nullptr};
      auto start = std::chrono::steady_clock::now();
      pid_t pid = 0;
      if (::posix_spawnp(&pid, "bash", nullptr, nullptr, argv, environ) != 0) return 1.0;
      ::waitpid(pid, nullptr, 0);
      micros.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::nth_element(micros.begin(), micros.begin() + 4, micros.end());
    return std::max(1.0, micros[4] / 4000);
  }();
  return factor;
}

/// An upper time bound: `bound` times the machine factor times RCOORD_TIME_SCALE (scripts/test
/// sets 2 for the sanitized pass).
inline Millis scaled(Millis bound) {
  const char* s = std::getenv("RCOORD_TIME_SCALE");
  double scale = std::max(1, s != nullptr ? std::atoi(s) : 1);
  return Millis(static_cast<Millis::rep>(std::ceil(bound.count() * machine_factor() * scale)));
}

/// Polls `done` every 10 ms until it holds; false when it still does not after `patience`
/// (scaled: a limit on patience, not a bound under test).
template <typename Done>
bool wait_until(Done done, Millis patience = Millis(10'000)) {
  auto deadline = std::chrono::steady_clock::now() + scaled(patience);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(Millis(10));
  }
  return true;
}

/// How many clients of the server behind `c` are blocked in BLPOP or BLMOVE: where the
/// waiters of lock, sem, elect and queue sit while they wait.
inline int blocked_clients(Connection& c) {
  std::string list = reply_string(c.command({"CLIENT", "LIST"}).get());
  int n = 0;
  for (const char* cmd : {" cmd=blpop ", " cmd=blmove "}) {
    for (auto at = list.find(cmd); at != std::string::npos; at = list.find(cmd, at + 1)) ++n;
  }
  return n;
}

/// Waits until at least `n` clients are blocked (see blocked_clients).
inline bool wait_blocked(Connection& c, int n) {
  return wait_until([&] { return blocked_clients(c) >= n; });
}

/// How many connections are subscribed to `channel`.
inline std::int64_t subscribers(Connection& c, const std::string& channel) {
  auto r = c.command({"PUBSUB", "NUMSUB", channel});
  return reply_integer(r->element[1]);
}

}  // namespace rcoord::test
