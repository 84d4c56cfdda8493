#pragma once
/// Small pieces every waiting primitive shares (lock, semaphore, election, queue): jitter for
/// fallback retries, elapsed time, and the timeout argument of a blocking pop.

#include <chrono>
#include <string>

#include "duration.hpp"

namespace rcoord::waiting {

using Clock = std::chrono::steady_clock;

/// `base` plus up to 20% more, so that many waiters do not retry in step.
Millis jittered(Millis base);

/// Milliseconds elapsed since `start` on the monotonic clock.
inline Millis since(Clock::time_point start) {
  return std::chrono::duration_cast<Millis>(Clock::now() - start);
}

/// The timeout argument of BLPOP/BLMOVE for `block`: seconds with a millisecond fraction, at
/// least 0.002 (Redis 6.2 reads 0.001 as 0, i.e. forever).
std::string block_seconds(Millis block);

/// How long one blocking pop may block: `block`, at most half the I/O timeout. A server that
/// froze or cannot be reached never answers a pop, so the wait notices it within one and a
/// half timeouts (the pop's block, then the timeout for its reply).
Millis cap_block(Millis block, Millis io_timeout);

}  // namespace rcoord::waiting
