#include "lock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "script.hpp"
#include "token.hpp"

namespace rcoord {

void check_name(std::string_view what, std::string_view name) {
  if (name.empty()) {
    throw Error(kUsage, fmt::format("empty {} name", what), "give a non-empty name");
  }
}

namespace lock {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kType = "lock";

// When no release wakes us (a holder crashed, a wake-up was lost with a killed waiter),
// we retry anyway: at the holder's expiry, and at most every kMaxBackoff.
constexpr Millis kFirstBackoff{500};
constexpr Millis kMaxBackoff{5000};

std::int64_t element_integer(const redisReply* r, std::size_t i) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements <= i) {
    throw Error(kServer, "unexpected reply from a lock script");
  }
  return reply_integer(r->element[i]);
}

Millis jittered(Millis base) {
  static std::minstd_rand rng{std::random_device{}()};
  std::uniform_int_distribution<std::int64_t> spread(0,
                                                     std::max<std::int64_t>(1, base.count() / 5));
  return base + Millis(spread(rng));
}

Millis since(Clock::time_point start) {
  return std::chrono::duration_cast<Millis>(Clock::now() - start);
}

std::string blpop_seconds(Millis block) {
  return fmt::format("{}.{:03}", block.count() / 1000, block.count() % 1000);
}

}  // namespace

Acquired acquire(Connection& conn, const Keys& keys, std::string_view name,
                 const AcquireOptions& opts) {
  check_name("lock", name);
  if (opts.ttl.count() <= 0) throw Error(kUsage, "--ttl must be positive", "use e.g. --ttl 30s");
  Acquired result;
  result.name = std::string(name);
  std::string token = opts.token.empty() ? random_token() : opts.token;
  Args lock_keys{keys.object(kType, name), keys.aux(kType, name, "fence")};
  std::string wake_key = keys.aux(kType, name, "wake");
  Args args{token, std::to_string(opts.ttl.count())};

  auto start = Clock::now();
  Millis backoff = kFirstBackoff;
  for (;;) {
    Reply r = eval(conn, lua::kLockAcquire, lock_keys, args);
    result.waited_ms = since(start).count();
    if (element_integer(r.get(), 0) == 1) {
      result.acquired = true;
      result.token = token;
      result.fence = element_integer(r.get(), 1);
      result.ttl_ms = element_integer(r.get(), 2);
      return result;
    }
    result.ttl_ms = element_integer(r.get(), 2);
    if (!opts.wait) return result;
    Millis left = opts.wait == Millis::max() ? Millis::max() : *opts.wait - since(start);
    if (left.count() <= 0) return result;
    // Sleep until a release pushes a wake-up, the holder's lease runs out, or the fallback.
    Millis holder_left = result.ttl_ms > 0 ? Millis(result.ttl_ms) : backoff;
    Millis block = std::min({left, jittered(std::min(holder_left, backoff))});
    block = std::max(block, Millis(1));
    conn.command_blocking({"BLPOP", wake_key, blpop_seconds(block)}, block);
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

bool release(Connection& conn, const Keys& keys, std::string_view name, std::string_view token) {
  check_name("lock", name);
  Reply r = eval(conn, lua::kLockRelease, {keys.object(kType, name), keys.aux(kType, name, "wake")},
                 {std::string(token)});
  return reply_integer(r.get()) == 1;
}

Extended extend(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
                Millis ttl) {
  check_name("lock", name);
  if (ttl.count() <= 0) throw Error(kUsage, "--ttl must be positive", "use e.g. --ttl 30s");
  Reply r = eval(conn, lua::kLockExtend, {keys.object(kType, name)},
                 {std::string(token), std::to_string(ttl.count())});
  Extended e;
  e.name = std::string(name);
  e.extended = element_integer(r.get(), 0) == 1;
  e.fence = element_integer(r.get(), 1);
  e.ttl_ms = e.extended ? ttl.count() : 0;
  return e;
}

Status status(Connection& conn, const Keys& keys, std::string_view name) {
  check_name("lock", name);
  Reply r =
      eval(conn, lua::kLockStatus, {keys.object(kType, name), keys.aux(kType, name, "fence")}, {});
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
    throw Error(kServer, "unexpected reply from the lock_status script");
  }
  Status s;
  s.name = std::string(name);
  s.token = reply_string(r->element[0]);
  s.held = !s.token.empty();
  s.fence = reply_integer(r->element[1]);
  s.ttl_ms = std::max<std::int64_t>(0, reply_integer(r->element[2]));
  return s;
}

Broken break_lock(Connection& conn, const Keys& keys, std::string_view name) {
  check_name("lock", name);
  Reply r =
      eval(conn, lua::kLockBreak, {keys.object(kType, name), keys.aux(kType, name, "wake")}, {});
  Broken b;
  b.name = std::string(name);
  b.token = reply_string(r.get());
  b.broken = !b.token.empty();
  return b;
}

}  // namespace lock
}  // namespace rcoord
