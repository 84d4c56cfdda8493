#include "timetable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "errors.hpp"

namespace rcoord {

// What a renewal needs to outlast lost packets: on an established connection a lost segment
// is sent again after Linux's minimum RTO of 200 ms, doubling each time, so 1.5 s outlasts
// three losses of the request or its reply in a row (0.2 + 0.4 + 0.8 s).
constexpr Millis kRetransmitRoom{1'500};

LeaseTimes::Clock::time_point LeaseTimes::next_renewal(Clock::time_point sent) const {
  auto window = stop_at() - sent;
  // The room left between the renewal and the stop point: half the window, or when that is
  // short, up to kRetransmitRoom of it (never more than two thirds, so renewals stay apart).
  Clock::duration room = std::max<Clock::duration>(
      window / 2, std::min<Clock::duration>(kRetransmitRoom, window * 2 / 3));
  return sent + std::max<Clock::duration>(std::min<Clock::duration>(ttl / 3, window - room),
                                          Clock::duration::zero());
}

Millis default_kill_grace(Millis ttl) { return std::min(Millis(10'000), ttl / 3); }

Millis run_margin(Millis timeout, bool timeout_given, Millis ttl) {
  return timeout_given ? timeout : std::min(timeout, ttl / 4);
}

Millis fit_kill_grace(std::optional<Millis> given, Millis ttl, Millis margin,
                      std::string_view ttl_option) {
  // The default shrinks with a short lease: at most half of what the margin leaves.
  Millis grace = given.value_or(std::min(default_kill_grace(ttl), (ttl - margin) / 2));
  if (grace > Millis(0) && grace + margin < ttl) return grace;
  if (given && margin < ttl) {
    throw Error(kUsage,
                fmt::format("--kill-grace {} does not fit {} {}: the command must be dead one "
                            "--timeout ({}) before the lease can end",
                            format_duration(grace), ttl_option, format_duration(ttl),
                            format_duration(margin)),
                fmt::format("give a --kill-grace shorter than {}, a longer {}, or a shorter "
                            "--timeout; without --kill-grace the grace fits the lease",
                            format_duration(ttl - margin), ttl_option));
  }
  throw Error(kUsage,
              fmt::format("{} {} is too short for --timeout {}: the command must be stopped and "
                          "dead one --timeout before the lease can end",
                          ttl_option, format_duration(ttl), format_duration(margin)),
              fmt::format("give a {} longer than {}, or a shorter --timeout; without --timeout "
                          "the timeout fits the lease",
                          ttl_option, format_duration(margin + std::max(grace, Millis(1)))));
}

Millis guard_check_every(Millis ttl, Millis kill_grace, Millis margin) {
  return std::max(Millis(0), ttl - kill_grace - margin) / 2;
}

}  // namespace rcoord
