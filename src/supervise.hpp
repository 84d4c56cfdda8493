#pragma once
/// Runs a child command while a lease (lock, permit, leadership, a message's lease) is held:
/// renews the lease, forwards termination signals to the child's process group, and has the
/// whole group dead before the server can free what it held. Shared by `lock run`, `sem
/// run`, `elect run` and `queue consume`.
///
/// The lease's timetable (when to renew, stop and kill) is timetable.hpp's.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "duration.hpp"
#include "lease.hpp"
#include "timetable.hpp"

namespace rcoord {

struct SuperviseOptions {
  std::vector<std::string> command;                      ///< argv; no shell
  std::vector<std::pair<std::string, std::string>> env;  ///< added to the child's environment
  Millis kill_grace{10'000};                             ///< SIGTERM → SIGKILL delay
  Millis margin{2'000};  ///< kept between SIGKILL and the lease's end (one --timeout)
  /// When >= 0, the child's standard input (dup2'ed onto fd 0 before exec; not closed by
  /// supervise). Otherwise the child inherits rcoord's.
  int stdin_fd = -1;
  /// Graceful mode, for commands that are one of many (`queue consume`): the child stays in
  /// the background (no terminal handover), and the first termination signal rcoord receives
  /// is only recorded (signals::pending()), so the child can finish its work; a second one
  /// is forwarded as usual.
  bool graceful = false;
  /// The longest the command may run (--max-run): after that, SIGTERM to its group, SIGKILL
  /// after kill_grace, and the result says timed_out. nullopt: no limit.
  std::optional<Millis> max_run{};
  /// Called once the command has been started (the run form's READY=1 to systemd).
  std::function<void()> on_started{};
};

struct SuperviseResult {
  int exit_code = 0;         ///< the child's code, or 128+N if it died of signal N
  bool lost = false;         ///< the lease was lost while the child ran, or before it started
  bool started = true;       ///< false: the lease was past its stop point before the child
                             ///< could start (rcoord was stopped or not scheduled): never run
  bool timed_out = false;    ///< the command ran longer than max_run and was stopped
  std::string lost_reason;   ///< why, for the message
  int forwarded_signal = 0;  ///< the last termination signal rcoord received and forwarded
  int stragglers = 0;        ///< group members still running when the child exited (stopped)
};

/// Forks and execs `opts.command` in a new process group and supervises it until the whole
/// group is gone: members still running when the command exits get SIGTERM, then SIGKILL
/// after the grace, while the lease is still renewed. If rcoord dies (SIGKILL included), the
/// command dies with it (a death signal on the child, and a guard process that kills the
/// group); if rcoord is stopped or starved past the lease's kill point, the guard kills the
/// group then, and the result says lost. A lease already past its stop point (the take's reply was
/// read too late) is renewed once first; when that fails it is lost before the command starts,
/// which is not started at all. Throws Error(kUsage) for an empty command; the child exits 127
/// (126) when exec fails. The process start is spawn.hpp's, the guard guard.hpp's.
SuperviseResult supervise(const SuperviseOptions& opts, Lease& lease);

/// Starts the guard process supervise() needs (else it starts on first use), looking every
/// `check_every` (guard_check_every). A `run` verb that may wait calls it before it waits for
/// what it takes: the fork then happens while it waits, not between taking the lock and
/// starting the command, where every waiter behind it would wait for it too (a try once
/// leaves it to supervise(): a busy try forks nothing). Throws Error(kServer) when it cannot
/// start.
void start_guard(Millis check_every);

}  // namespace rcoord
