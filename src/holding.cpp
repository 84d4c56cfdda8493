#include "holding.hpp"

#include <sys/resource.h>

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

// Returns whether the give-back woke someone to take it next.
bool give_back(Lease& lease, const HoldingOptions& opts, const HoldObserver& on_event,
               const Ending& ending) {
  bool woke = false;
  settle_quietly(opts.give_back_timeout, on_event,
                 [&](Clock::time_point deadline) { woke = lease.give_back(ending, deadline); });
  return woke;
}

// What is left of this process once it has given back (its exit) yields the CPU to whoever
// was woken to take next: that waiter's start and the command it runs come first when the
// CPUs are busy. Measured with 8 `lock run`s on one lock on two CPUs (docs/benchmarks.md):
// 2-4 % more hand-offs a second. It cannot be undone without privilege, so only a process
// that exits next may do it.
void yield_to_next_holder() { setpriority(PRIO_PROCESS, 0, 19); }

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
  } else if (give_back(lease, opts, on_event, ending) && opts.yield_after_give_back) {
    yield_to_next_holder();
  }
  return code;
}

}  // namespace rcoord
