#include "latch.hpp"

#include <fmt/format.h>

#include <chrono>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "pubsub.hpp"
#include "script.hpp"

namespace rcoord::latch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kType = "latch";

// While nothing is announced, a waiter reads the count again this often anyway: a cheap
// guard against whatever bypasses the scripts (a count set by hand, a restored backup).
constexpr Millis kRecheck{30'000};

}  // namespace

Initialized init(Connection& conn, const Keys& keys, std::string_view name, std::int64_t count,
                 std::optional<Millis> ttl) {
  check_name("latch", name);
  if (count < 0) throw Error(kUsage, "--count must be 0 or more", "use e.g. --count 10");
  std::string key = keys.object(kType, name);
  Reply r = eval(conn, lua::kLatchInit, {key},
                 {std::to_string(count), ttl ? std::to_string(ttl->count()) : std::string(), key});
  Initialized out = decode_init(r.get());
  out.name = std::string(name);
  return out;
}

Initialized decode_init(const redisReply* r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
    throw Error(kServer, "unexpected reply from the latch_init script");
  }
  Initialized out;
  out.created = reply_integer(r->element[0]) == 1;
  out.count = reply_integer(r->element[1]);
  return out;
}

Counted down(Connection& conn, const Keys& keys, std::string_view name, std::int64_t by) {
  check_name("latch", name);
  if (by < 1) throw Error(kUsage, "--by must be 1 or more", "use e.g. --by 2");
  std::string key = keys.object(kType, name);
  Reply r = eval(conn, lua::kLatchDown, {key}, {std::to_string(by), key});
  Counted out;
  out.name = std::string(name);
  std::int64_t left = reply_integer(r.get());
  out.found = left >= 0;
  out.count = out.found ? left : 0;
  return out;
}

Status status(Connection& conn, const Keys& keys, std::string_view name) {
  check_name("latch", name);
  Reply r = eval(conn, lua::kLatchStatus, {keys.object(kType, name)}, {});
  Status out = decode_status(r.get());
  out.name = std::string(name);
  return out;
}

Call status_call(const Keys& keys, std::string_view name) {
  return script_call(lua::kLatchStatus, {keys.object(kType, name)}, {});
}

Status decode_status(const redisReply* r) {
  Status out;
  std::int64_t count = reply_integer(r);
  out.found = count >= 0;
  out.count = out.found ? count : 0;
  return out;
}

Waited wait(Connection& conn, const Keys& keys, std::string_view name,
            std::optional<Millis> timeout) {
  check_name("latch", name);
  auto start = Clock::now();
  auto deadline = deadline_after(timeout);
  Waited out;
  out.name = std::string(name);
  auto finish = [&](bool open) {
    out.open = open;
    out.waited_ms = std::chrono::duration_cast<Millis>(Clock::now() - start).count();
    return out;
  };

  // Subscribe first, read second: the count-down that opens the latch is then either seen
  // by the read or announced to us, never lost in between.
  Subscriber sub(conn.endpoint(), conn.timeout());
  sub.subscribe_routed({keys.object(kType, name)}, {keys.object(kType, name)});
  for (;;) {
    Status s = status(conn, keys, name);
    out.count = s.found ? std::optional<std::int64_t>(s.count) : std::nullopt;
    if (s.found && s.count == 0) return finish(true);
    auto now = Clock::now();
    if (now >= deadline) return finish(false);
    auto block = std::min(deadline - now, Clock::duration(kRecheck));
    if (sub.next(std::chrono::duration_cast<Millis>(block) + Millis(1))) {
      out.count = 0;  // only the opening is announced
      return finish(true);
    }
  }
}

}  // namespace rcoord::latch
