#include "waiting.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "token.hpp"

namespace rcoord::waiting {

Millis jittered(Millis base) {
  static std::minstd_rand rng{random_seed()};
  std::uniform_int_distribution<std::int64_t> spread(0,
                                                     std::max<std::int64_t>(1, base.count() / 5));
  return base + Millis(spread(rng));
}

Millis cap_block(Millis block, Millis io_timeout) {
  return std::clamp(block, Millis(1), std::max(io_timeout / 2, Millis(1)));
}

std::string block_seconds(Millis block) {
  // Redis 6.2 turns the seconds into milliseconds by truncating their product by 1000 in
  // long double, where 0.001 is a hair less than a thousandth: 0.001 becomes 0, which blocks
  // forever. From 2 ms on the product truncates to 1 ms or more (Redis 7 rounds it up).
  auto ms = std::max<std::int64_t>(block.count(), 2);
  return fmt::format("{}.{:03}", ms / 1000, ms % 1000);
}

}  // namespace rcoord::waiting
