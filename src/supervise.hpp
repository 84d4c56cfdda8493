#pragma once
/// Runs a child command while a lease (lock, permit, leadership, a message's lease) is held:
/// renews the lease, forwards termination signals to the child's process group, and has the
/// whole group dead before the server can free what it held. Shared by `lock run`, `sem
/// run`, `elect run` and `queue consume`.
///
/// The timetable of a lease, on the monotonic clock. The server starts the TTL when it runs
/// the take or the renewal, never before we sent it, so counting from the send is safe:
///
///     end      = send of the take (or of the last renewal that succeeded) + TTL: the
///                earliest moment the server can free it;
///     stop_at  = end - kill_grace - margin: if the lease could not be renewed by then, the
///                command gets SIGTERM (a renewal never waits past stop_at);
///     kill     = stop_at + kill_grace = end - margin: SIGKILL to the whole group.
///
/// The margin is one --timeout (the default shrunk to a quarter of a short lease: run_margin):
/// time for the SIGKILL to land and for rcoord itself to be scheduled late. Renewals go out every
/// TTL/3, or earlier so that each one has half the way to stop_at (at least 1.5 s when that is at
/// most two thirds of the way, for TCP to resend a lost packet three times), and are retried until
/// stop_at. So the TTL must exceed kill_grace + margin (fit_kill_grace checks it).
///
/// --max-run adds one more point to the same timetable: the command's start + max_run, when a
/// command still running gets SIGTERM and, kill_grace later, SIGKILL. The lease is renewed on
/// through that grace as on any other day (a max_run longer than the TTL is fine), so what is
/// held is given back only once the whole group is gone.

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

namespace rcoord {

/// The pure arithmetic of the timetable above.
struct LeaseTimes {
  using Clock = std::chrono::steady_clock;
  Millis ttl{30'000};
  Millis kill_grace{10'000};
  Millis margin{2'000};
  Clock::time_point end;  ///< the earliest moment the server can free the lease

  /// SIGTERM by then at the latest, unless a renewal succeeded.
  Clock::time_point stop_at() const { return end - kill_grace - margin; }
  /// SIGKILL to the group by then at the latest.
  Clock::time_point kill_by() const { return end - margin; }
  /// A renewal sent at `sent` succeeded: the lease now ends TTL later.
  void renewed(Clock::time_point sent) { end = sent + ttl; }
  /// When to renew next after a renewal (or the take) sent at `sent`.
  Clock::time_point next_renewal(Clock::time_point sent) const;
};

/// The default --kill-grace for a lease of `ttl`: the smaller of 10s and a third of it.
Millis default_kill_grace(Millis ttl);

/// The room a `run` form keeps between SIGKILL and the lease's end (its --timeout when one
/// was given; otherwise the --timeout, shrunk to a quarter of a short lease), so that any
/// lease of 1s or more fits the defaults (SPEC §6 "short leases").
Millis run_margin(Millis timeout, bool timeout_given, Millis ttl);

/// The kill grace a `run` form uses: `given`, else the default (which shrinks to fit a short
/// lease). Throws Error(kUsage) with a hint when it and the `margin` do not fit in the lease
/// (only possible with a --kill-grace or --timeout given); `ttl_option` names the lease's
/// option in the message (`--ttl`, `--ack-timeout`).
Millis fit_kill_grace(std::optional<Millis> given, Millis ttl, Millis margin,
                      std::string_view ttl_option);

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

/// How often the guard looks at what it watches, for leases of `ttl` with this kill grace and
/// margin: half the time from a take to its stop point, so that it sees a command's kill
/// point before it comes.
Millis guard_check_every(Millis ttl, Millis kill_grace, Millis margin);

/// Starts the guard process supervise() needs (else it starts on first use), looking every
/// `check_every` (guard_check_every). A `run` verb that may wait calls it before it waits for
/// what it takes: the fork then happens while it waits, not between taking the lock and
/// starting the command, where every waiter behind it would wait for it too (a try once
/// leaves it to supervise(): a busy try forks nothing). Throws Error(kServer) when it cannot
/// start.
void start_guard(Millis check_every);

}  // namespace rcoord
