#include "watching.hpp"

#include <algorithm>

#include "waiting.hpp"

namespace rcoord::watching {

bool wait_until_free(Connection& conn, const std::string& wake_key, std::optional<Millis> wait,
                     const std::function<Look(Millis life)>& look) {
  const auto start = waiting::Clock::now();
  const Millis life = 3 * kHeartbeat;
  const bool may_wait = wait && wait->count() > 0;
  Look seen = look(may_wait ? life : Millis(0));
  while (!seen.free) {
    if (!may_wait) return false;
    Millis left = *wait == Millis::max() ? Millis::max() : *wait - waiting::since(start);
    // The last look leaves the watchers; a wake-up that came just before still counts.
    if (left.count() <= 0) return look(Millis(0)).free;
    // A lease that ends by its TTL wakes nobody: look again just after it would end.
    Millis lapse = seen.holder_left == Millis::max() ? Millis::max() : seen.holder_left + Millis(2);
    Millis block =
        waiting::cap_block(std::min({left, lapse, waiting::jittered(kHeartbeat)}), conn.timeout());
    Reply woke = conn.command_blocking({"BLPOP", wake_key, waiting::block_seconds(block)}, block);
    if (woke && woke->type == REDIS_REPLY_ARRAY) return true;
    seen = look(life);
  }
  return true;
}

}  // namespace rcoord::watching
