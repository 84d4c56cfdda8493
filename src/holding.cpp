#include "holding.hpp"

#include <chrono>

#include "errors.hpp"
#include "signals.hpp"

namespace rcoord {
namespace {

using Clock = std::chrono::steady_clock;

// Giving back must finish even when a signal comes, and never waits long: what is not given
// back expires by its TTL.
template <typename Fn>
void settle_quietly(Millis timeout, const HoldObserver& on_event, Fn&& settle) {
  signals::Uninterruptible quiet;
  try {
    settle(Clock::now() + timeout);
  } catch (const Error& e) {
    on_event({HoldEvent::Kind::kGiveBackFailed, e.what()});
  }
}

void give_back(Lease& lease, const HoldingOptions& opts, const HoldObserver& on_event,
               const Ending& ending) {
  settle_quietly(opts.give_back_timeout, on_event,
                 [&](Clock::time_point deadline) { lease.give_back(ending, deadline); });
}

}  // namespace

int run_holding(Lease& lease, const HoldingOptions& opts, const HoldObserver& on_event) {
  auto started = Clock::now();
  SuperviseResult result = supervise(opts.supervise, lease);
  if (result.lost) {
    on_event({result.started ? HoldEvent::Kind::kLost : HoldEvent::Kind::kLostUnstarted,
              result.lost_reason});
    // Exact by token: harmless if someone else holds it now. The history learns of the loss.
    give_back(lease, opts, on_event, {.how = Ending::How::kLost, .exit_code = kLost});
    return kLost;
  }
  if (result.timed_out) on_event({HoldEvent::Kind::kTimedOut, {}});
  int code = result.timed_out ? kTimedOut : result.exit_code;
  auto held_for = std::chrono::duration_cast<Millis>(Clock::now() - started);
  Ending ending{.how = result.timed_out ? Ending::How::kTimedOut : Ending::How::kGivenBack,
                .exit_code = code};
  if (lease.keep && opts.min_hold > held_for) {
    // Kept until --min-hold has passed, so that a host whose cron fires late finds it busy.
    settle_quietly(opts.give_back_timeout, on_event, [&](Clock::time_point deadline) {
      lease.keep(ending, opts.min_hold - held_for, deadline);
    });
  } else {
    give_back(lease, opts, on_event, ending);
  }
  return code;
}

}  // namespace rcoord
