#include "lock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "script.hpp"
#include "token.hpp"
#include "waiting.hpp"
#include "watching.hpp"

namespace rcoord {

void check_name(std::string_view what, std::string_view name) {
  if (name.empty()) {
    throw Error(kUsage, fmt::format("empty {} name", what), "give a non-empty name");
  }
}

namespace lock {
namespace {

// What the element accessors name when a script reply has not the shape they expect.
constexpr std::string_view kScripts = "a lock script";

using waiting::jittered;
using waiting::since;

using Clock = std::chrono::steady_clock;
constexpr std::string_view kType = "lock";

// Where lock_acquire's ARGV has the server time of the first busy answer (its ARGV[9]).
constexpr std::size_t kBusySinceArg = 8;

// How long a waiting writer stays among the waiting without trying again (kWaiterHeartbeat).
constexpr Millis kWaiterLife = 3 * kWaiterHeartbeat;

Args lock_keys(const Keys& keys, std::string_view name) {
  return {keys.object(kType, name),          keys.aux(kType, name, "fence"),
          keys.aux(kType, name, "wake"),     keys.aux(kType, name, "readers"),
          keys.aux(kType, name, "writers"),  keys.aux(kType, name, "rwait"),
          keys.aux(kType, name, "rfence"),   keys.aux(kType, name, "rwho"),
          keys.history(kType, name),         keys.aux(kType, name, "taken"),
          keys.aux(kType, name, "watchers"), keys.aux(kType, name, "stats")};
}

std::string reader_wake_prefix(const Keys& keys, std::string_view name) {
  return keys.aux(kType, name, "rwake:");
}

// lock_release's ARGV up to its announcement channel: `token`'s give-back, recorded as `ending`.
Args release_args(const Keys& keys, std::string_view name, std::string_view token,
                  const Ending& ending) {
  Args args{std::string(token), reader_wake_prefix(keys, name),
            std::to_string(kWaiterLife.count())};
  Args recorded = history::ending_args(keys, ending);
  args.insert(args.end(), recorded.begin(), recorded.end());
  return args;
}

const Script& acquire_script(const AcquireOptions& opts) {
  return opts.shared ? lua::kLockAcquireShared : lua::kLockAcquire;
}

// lock_acquire's (or lock_acquire_shared's) ARGV for a try of `opts` with `token`.
Args acquire_args(const Keys& keys, const std::string& token, const AcquireOptions& opts) {
  // Without --wait a busy answer is the call's last: the script records it (a waiter's
  // `busy` is recorded once, when it gives up).
  Args args{token,
            std::to_string(opts.ttl.count()),
            opts.wait || opts.enlist ? "1" : "0",
            std::to_string(kWaiterLife.count()),
            opts.who,
            std::to_string(keys.history_cap()),
            opts.wait || !opts.busy_is_final ? "0" : "1"};
  args.push_back(opts.fence_floor > 0 ? std::to_string(opts.fence_floor) : std::string());
  args.push_back(opts.busy_since > 0 ? std::to_string(opts.busy_since) : std::string());
  return args;
}

}  // namespace

Call acquire_call(const Keys& keys, std::string_view name, const std::string& token,
                  const AcquireOptions& opts) {
  check_name("lock", name);
  return script_call(acquire_script(opts), lock_keys(keys, name), acquire_args(keys, token, opts));
}

Acquired acquire(Connection& conn, const Keys& keys, std::string_view name,
                 const AcquireOptions& opts) {
  check_name("lock", name);
  Acquired result;
  result.name = std::string(name);
  std::string token = opts.token.empty() ? random_token() : opts.token;
  Args k = lock_keys(keys, name);
  const Script& script = acquire_script(opts);
  std::string wake_key = opts.shared ? reader_wake_prefix(keys, name) + token : k[2];
  Args args = acquire_args(keys, token, opts);
  result.busy_since = opts.busy_since;
  result.who = opts.who;

  Take take{script, k, args, [&] { release(conn, keys, name, token); },
            [](const redisReply* reply) { return element_integer(reply, 0, kScripts) == 1; }};
  auto start = Clock::now();
  result.sent = start;
  Reply r = eval_taking(conn, take);
  for (;;) {
    result.waited_ms = since(start).count();
    if (take.took(r.get())) {
      result.acquired = true;
      result.token = token;
      result.fence = element_integer(r.get(), 1, kScripts);
      result.ttl_ms = element_integer(r.get(), 2, kScripts);
      result.refreshed = element_integer(r.get(), 3, kScripts) == 1;
      return result;
    }
    result.ttl_ms = element_integer(r.get(), 2, kScripts);
    if (result.busy_since == 0) {
      // The next tries count their wait from the first busy answer, on the server's clock.
      result.busy_since = element_integer(r.get(), 3, kScripts);
      args[kBusySinceArg] = std::to_string(result.busy_since);
    }
    if (!opts.wait) return result;
    Millis left = opts.wait == Millis::max() ? Millis::max() : *opts.wait - since(start);
    if (left.count() <= 0) {
      // Withdraw (the history records `busy`), and pass on a wake-up we may have taken.
      release(conn, keys, name, token,
              {.how = Ending::How::kWithdrawn, .who = opts.who, .waited_ms = result.waited_ms});
      return result;
    }
    // Sleep until a release wakes us, the holder's lease runs out, or the heartbeat is due;
    // then try again.
    Millis holder_left = result.ttl_ms > 0 ? jittered(Millis(result.ttl_ms)) : kWaiterHeartbeat;
    Millis block = waiting::cap_block(std::min({left, holder_left, jittered(kWaiterHeartbeat)}),
                                      conn.timeout());
    r = retry_after_wait(conn, take, wake_key, block, opts.ttl, result.sent);
  }
}

GivenBack release_waking(Connection& conn, const Keys& keys, std::string_view name,
                         std::string_view token, const Ending& ending,
                         std::string_view announce_on) {
  check_name("lock", name);
  Args args = release_args(keys, name, token, ending);
  if (!announce_on.empty()) args.emplace_back(announce_on);
  Reply r = eval(conn, lua::kLockRelease, lock_keys(keys, name), args);
  std::int64_t answer = reply_integer(r.get());  // 2: released, and a waiter woken
  return {.released = answer >= 1, .woke = answer == 2};
}

bool release(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
             const Ending& ending, std::string_view announce_on) {
  return release_waking(conn, keys, name, token, ending, announce_on).released;
}

bool keep(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
          const Ending& ending, Millis rest) {
  check_name("lock", name);
  Args args = release_args(keys, name, token, ending);
  args.emplace_back();  // no announcement: the lock is still taken
  args.push_back(std::to_string(rest.count()));
  Reply r = eval(conn, lua::kLockRelease, lock_keys(keys, name), args);
  return reply_integer(r.get()) == 1;
}

std::string released_channel(const Keys& keys, std::string_view name) {
  return keys.aux(kType, name, "released");
}

Extended extend(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
                Millis ttl) {
  check_name("lock", name);
  Reply r = eval(conn, lua::kLockExtend, lock_keys(keys, name),
                 {std::string(token), std::to_string(ttl.count())});
  Extended e;
  e.name = std::string(name);
  e.extended = element_integer(r.get(), 0, kScripts) == 1;
  e.fence = element_integer(r.get(), 1, kScripts);
  e.ttl_ms = e.extended ? ttl.count() : 0;
  return e;
}

bool raise_fence(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
                 std::int64_t fence) {
  check_name("lock", name);
  Reply r = eval(conn, lua::kLockFenceRaise, lock_keys(keys, name),
                 {std::string(token), std::to_string(fence)});
  return reply_integer(r.get()) == 1;
}

Status status(Connection& conn, const Keys& keys, std::string_view name) {
  check_name("lock", name);
  Reply r = eval(conn, lua::kLockStatus, lock_keys(keys, name), {});
  Status s = decode_status(r.get());
  s.name = std::string(name);
  return s;
}

Freed wait_free(Connection& conn, const Keys& keys, std::string_view name,
                std::optional<Millis> wait) {
  check_name("lock", name);
  Freed out;
  out.name = std::string(name);
  std::string watcher = random_token();
  Args k = lock_keys(keys, name);
  auto start = Clock::now();
  out.free = watching::wait_until_free(
      conn, k[10] + ":" + watcher, wait, [&](Millis life) -> watching::Look {
        Reply r = eval(conn, lua::kLockWatch, k,
                       {watcher, std::to_string(life.count()), std::to_string(keys.history_cap())});
        out.ttl_ms = std::max<std::int64_t>(0, element_integer(r.get(), 1, kScripts));
        return {element_integer(r.get(), 0, kScripts) == 1, Millis(out.ttl_ms)};
      });
  if (out.free) out.ttl_ms = 0;
  out.waited_ms = since(start).count();
  return out;
}

Call status_call(const Keys& keys, std::string_view name) {
  return script_call(lua::kLockStatus, lock_keys(keys, name), {});
}

namespace {

// ended_at, ended_ms and exit_code (-1 unknown) of lock_status' reply, from element `at` on.
Kept decode_kept(const redisReply* r, std::size_t at) {
  Kept k{reply_integer(r->element[at]), reply_integer(r->element[at + 1])};
  if (std::int64_t code = reply_integer(r->element[at + 2]); code >= 0) k.exit_code = code;
  return k;
}

}  // namespace

Status decode_status(const redisReply* r) {
  constexpr std::size_t kHead = 12;   // the fields before the readers
  constexpr std::size_t kReader = 8;  // the fields of each reader
  if (r->type != REDIS_REPLY_ARRAY || r->elements < kHead || (r->elements - kHead) % kReader != 0) {
    throw Error(kServer, "unexpected reply from the lock_status script");
  }
  Status s;
  s.token = reply_string(r->element[0]);
  s.fence = reply_integer(r->element[1]);
  s.ttl_ms = std::max<std::int64_t>(0, reply_integer(r->element[2]));
  s.mode = reply_string(r->element[3]);
  s.readers = reply_integer(r->element[4]);
  s.held = !s.token.empty() || s.readers > 0;
  s.held_ms = reply_integer(r->element[5]);
  s.waiting = reply_integer(r->element[6]);
  s.holder = {unpack(reply_string(r->element[7])), reply_integer(r->element[8]), s.held_ms};
  s.kept = decode_kept(r, 9);
  for (std::size_t i = kHead; i + kReader <= r->elements; i += kReader) {
    Reader reader;
    reader.token = reply_string(r->element[i]);
    reader.ttl_ms = std::max<std::int64_t>(0, reply_integer(r->element[i + 1]));
    reader.holder = {unpack(reply_string(r->element[i + 2])), reply_integer(r->element[i + 3]),
                     reply_integer(r->element[i + 4])};
    reader.kept = decode_kept(r, i + 5);
    s.reader_list.push_back(std::move(reader));
  }
  return s;
}

Broken break_lock(Connection& conn, const Keys& keys, std::string_view name,
                  const std::string& who) {
  check_name("lock", name);
  Reply r = eval(conn, lua::kLockBreak, lock_keys(keys, name),
                 {reader_wake_prefix(keys, name), std::to_string(kWaiterLife.count()),
                  std::to_string(keys.history_cap()), who});
  Broken b;
  b.name = std::string(name);
  b.token = reply_string(r.get());
  b.broken = !b.token.empty();
  if (b.token.rfind("readers:", 0) == 0) {  // the script's answer when readers held it
    b.readers = std::stoll(b.token.substr(8));
    b.token.clear();
  }
  return b;
}

Lease lease(Connection& conn, const Keys& keys, const Acquired& taken, Millis ttl) {
  Lease held = connection_lease(
      conn, ttl, taken.sent,
      [&conn, &keys, name = taken.name, token = taken.token, ttl] {
        return extend(conn, keys, name, token, ttl).extended;
      },
      [&conn, &keys, name = taken.name, token = taken.token, who = taken.who,
       waited = taken.waited_ms](const Ending& ending) {
        return release_waking(conn, keys, name, token, ending.of_taker(who, waited)).woke;
      },
      [&conn, &keys, name = taken.name, token = taken.token, who = taken.who,
       waited = taken.waited_ms](const Ending& ending, Millis rest) {
        keep(conn, keys, name, token, ending.of_taker(who, waited), rest);
      });
  // The holder's token is in the lock's hash (a writer) or its readers' zset (a reader).
  held.watched = {
      {&conn, {keys.object(kType, taken.name), keys.aux(kType, taken.name, "readers")}}};
  return held;
}

}  // namespace lock
}  // namespace rcoord
