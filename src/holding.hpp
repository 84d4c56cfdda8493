#pragma once
/// Running a command while holding a lease: what `lock run`, `sem run` and `elect run` (and
/// `lock run` on a Redlock) share once their primitive has taken something. The command is
/// supervised (supervise.hpp) while the lease is renewed, and what was held is given back
/// afterwards, or kept for --min-hold. Never prints: what the caller reports comes to it as
/// HoldEvents, at the moment it happens.

#include <functional>
#include <string>

#include "duration.hpp"
#include "lease.hpp"
#include "supervise.hpp"

namespace rcoord {

struct HoldingOptions {
  SuperviseOptions supervise;
  /// The longest the final give-back may wait (one --timeout); after that it is left to
  /// expire by its TTL.
  Millis give_back_timeout{2'000};
  /// Keep it (Lease::keep) until this long after the command started, even if the command
  /// ends sooner (`lock run --min-hold`). 0: give it back at once.
  Millis min_hold{0};
};

/// Something the caller may want to report, in the order it happens.
struct HoldEvent {
  enum class Kind {
    kLost,            ///< the lease was lost while the command ran; it was terminated
    kLostUnstarted,   ///< the lease was past its stop point at the start: command not run
    kTimedOut,        ///< the command ran past --max-run and was stopped
    kGiveBackFailed,  ///< giving back (or keeping) failed: it expires by its TTL
  };
  Kind kind;
  std::string detail;  ///< kLost, kLostUnstarted: why; kGiveBackFailed: the error
};

using HoldObserver = std::function<void(const HoldEvent&)>;

/// Runs opts.supervise.command while `lease` is renewed, then gives the lease back (or keeps
/// it for opts.min_hold, unless it was lost). Returns the command's exit code, kLost when the
/// lease was lost while it ran (or before it could start: it was then not started), or kTimedOut
/// when it ran past --max-run. Throws what supervise() throws (the lease is then neither renewed
/// nor given back: the caller's).
int run_holding(Lease& lease, const HoldingOptions& opts, const HoldObserver& on_event);

}  // namespace rcoord
