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

/// The timeout argument of BLPOP/BLMOVE for `block`: seconds with a millisecond fraction.
std::string block_seconds(Millis block);

}  // namespace rcoord::waiting
