#pragma once
/// A count-down latch: initialized to N, counted down by anyone, and open once it reaches 0.
/// Unlike a signal it keeps its state, so a waiter that comes after the last count-down
/// returns at once. Waiters are woken by a PUBLISH from the count-down that reaches 0.
///
/// Keys: `<prefix>{latch:NAME}` hash {count, initial}, with the TTL given to init. The
/// opening is announced on the channel `<prefix>{latch:NAME}`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"
#include "script.hpp"

namespace rcoord::latch {

struct Initialized {
  bool created = false;  ///< false: it existed already, and was left as it is
  std::string name;
  std::int64_t count = 0;  ///< the count now
};
/// Creates the latch with `count` (0 or more); `ttl` (positive: the command line checks it)
/// makes it expire. An existing latch is not touched.
Initialized init(Connection& conn, const Keys& keys, std::string_view name, std::int64_t count,
                 std::optional<Millis> ttl);
/// The reply of latch_init (no I/O), for tests and fuzzing: everything but the name. Throws
/// Error(kServer) for a reply of another shape.
Initialized decode_init(const redisReply* r);

struct Counted {
  bool found = false;  ///< false: there is no such latch (nothing was created)
  std::string name;
  std::int64_t count = 0;  ///< the count left
};
/// Counts down by `by` (1 or more), never below 0.
Counted down(Connection& conn, const Keys& keys, std::string_view name, std::int64_t by);

/// Same shape: found=false when there is no such latch.
using Status = Counted;
Status status(Connection& conn, const Keys& keys, std::string_view name);
/// status() as a call for a pipeline of many objects (send_calls), and its reply decoded
/// (no I/O: everything but the name).
Call status_call(const Keys& keys, std::string_view name);
Status decode_status(const redisReply* r);

struct Waited {
  bool open = false;  ///< the count is 0
  std::string name;
  std::optional<std::int64_t> count;  ///< the count when the wait ended; nullopt: no latch
  std::int64_t waited_ms = 0;
};
/// Returns as soon as the count is 0: at once if it is already, else when the count-down
/// that reaches 0 announces it. A latch that does not exist yet is waited for (it may be
/// created later). `timeout` nullopt: no limit. Throws Error(kInterrupted) on a signal.
Waited wait(Connection& conn, const Keys& keys, std::string_view name,
            std::optional<Millis> timeout);

}  // namespace rcoord::latch
