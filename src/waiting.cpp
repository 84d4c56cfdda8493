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
  return fmt::format("{}.{:03}", block.count() / 1000, block.count() % 1000);
}

}  // namespace rcoord::waiting
