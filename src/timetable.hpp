#pragma once
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

#include <chrono>
#include <optional>
#include <string_view>

#include "duration.hpp"

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

/// How often the guard looks at what it watches, for leases of `ttl` with this kill grace and
/// margin: half the time from a take to its stop point, so that it sees a command's kill
/// point before it comes.
Millis guard_check_every(Millis ttl, Millis kill_grace, Millis margin);

}  // namespace rcoord
