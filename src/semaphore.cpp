#include "semaphore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "script.hpp"
#include "token.hpp"
#include "waiting.hpp"
#include "watching.hpp"

namespace rcoord::semaphore {
namespace {

// What the element accessors name when a script reply has not the shape they expect.
constexpr std::string_view kScripts = "a semaphore script";

using waiting::jittered;
using waiting::since;

using Clock = std::chrono::steady_clock;
constexpr std::string_view kType = "sem";

// A queued waiter proves it is alive this often; a ticket not refreshed for kTicketLife is
// dropped, so a crashed waiter holds up the queue for that long at most.
constexpr Millis kHeartbeat{1000};
constexpr Millis kTicketLife{3000};

Args sem_keys(const Keys& keys, std::string_view name) {
  return {keys.object(kType, name),       keys.aux(kType, name, "permits"),
          keys.aux(kType, name, "queue"), keys.aux(kType, name, "alive"),
          keys.aux(kType, name, "wants"), keys.aux(kType, name, "seq"),
          keys.aux(kType, name, "meta"),  keys.aux(kType, name, "who"),
          keys.history(kType, name),      keys.aux(kType, name, "watchers"),
          keys.aux(kType, name, "stats")};
}

std::string wake_prefix(const Keys& keys, std::string_view name) {
  return keys.aux(kType, name, "wake:");
}

void check_options(const TakeOptions& opts) {
  if (opts.limit < 1) throw Error(kUsage, "--limit must be at least 1", "use e.g. --limit 3");
  if (opts.permits < 1 || opts.permits > opts.limit) {
    throw Error(kUsage,
                fmt::format("--permits {} does not fit --limit {}", opts.permits, opts.limit),
                "take between 1 and --limit permits");
  }
}

// sem_take's ARGV for a first try of `opts` with `token`.
Args take_args(const Keys& keys, std::string_view name, const std::string& token,
               const TakeOptions& opts) {
  // The first busy answer's server time ('': none yet).
  std::string busy_since = opts.busy_since > 0 ? std::to_string(opts.busy_since) : std::string();
  return {token,
          std::to_string(opts.limit),
          std::to_string(opts.permits),
          std::to_string(opts.ttl.count()),
          opts.wait || opts.enlist ? "1" : "0",
          std::to_string(kTicketLife.count()),
          wake_prefix(keys, name),
          opts.who,
          std::to_string(keys.history_cap()),
          opts.wait || opts.enlist ? "0" : "1",  // without --wait a busy answer is the last
          busy_since};
}

}  // namespace

Call take_call(const Keys& keys, std::string_view name, const std::string& token,
               const TakeOptions& opts) {
  check_name("semaphore", name);
  check_options(opts);
  return script_call(lua::kSemTake, sem_keys(keys, name), take_args(keys, name, token, opts));
}

Taken take(Connection& conn, const Keys& keys, std::string_view name, const TakeOptions& opts) {
  check_name("semaphore", name);
  check_options(opts);
  Taken result;
  result.name = std::string(name);
  result.limit = opts.limit;
  result.busy_since = opts.busy_since;
  std::string token = opts.token.empty() ? random_token() : opts.token;
  Args k = sem_keys(keys, name);
  std::string wake = wake_prefix(keys, name);
  Args args = take_args(keys, name, token, opts);
  result.who = opts.who;

  Take take{lua::kSemTake, k, args, [&] { release(conn, keys, name, token); },
            [](const redisReply* reply) { return element_integer(reply, 0, kScripts) == 1; }};
  auto start = Clock::now();
  result.sent = start;
  Reply r = eval_taking(conn, take);
  for (;;) {
    result.waited_ms = since(start).count();
    decode_take(r.get(), result);
    if (result.acquired) {
      result.token = token;
      result.ttl_ms = opts.ttl.count();
      return result;
    }
    if (result.busy_since == 0) {
      // The next tries count their wait from the first busy answer, on the server's clock.
      result.busy_since = element_integer(r.get(), 5, kScripts);
      args.back() = std::to_string(result.busy_since);
    }
    if (!opts.wait) return result;
    Millis left = opts.wait == Millis::max() ? Millis::max() : *opts.wait - since(start);
    if (left.count() <= 0) {
      // Leave the queue: nobody waits for us any more (the history records `busy`).
      release(conn, keys, name, token,
              {.how = Ending::How::kWithdrawn, .who = opts.who, .waited_ms = result.waited_ms});
      return result;
    }
    // Woken by a release that makes room for us, or after a heartbeat to stay in the queue.
    Millis block = waiting::cap_block(std::min(left, jittered(kHeartbeat)), conn.timeout());
    r = retry_after_wait(conn, take, wake + token, block, opts.ttl, result.sent);
  }
}

GivenBack release_waking(Connection& conn, const Keys& keys, std::string_view name,
                         std::string_view token, const Ending& ending) {
  check_name("semaphore", name);
  Args args{std::string(token), wake_prefix(keys, name), std::to_string(kTicketLife.count())};
  Args recorded = history::ending_args(keys, ending);
  args.insert(args.end(), recorded.begin(), recorded.end());
  Reply r = eval(conn, lua::kSemRelease, sem_keys(keys, name), args);
  std::int64_t answer = reply_integer(r.get());  // 2: released, and a waiter woken
  return {.released = answer >= 1, .woke = answer == 2};
}

bool release(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
             const Ending& ending) {
  return release_waking(conn, keys, name, token, ending).released;
}

bool refresh(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
             Millis ttl) {
  check_name("semaphore", name);
  Reply r = eval(conn, lua::kSemRefresh, sem_keys(keys, name),
                 {std::string(token), std::to_string(ttl.count())});
  return reply_integer(r.get()) == 1;
}

Status status(Connection& conn, const Keys& keys, std::string_view name) {
  check_name("semaphore", name);
  Reply r = eval(conn, lua::kSemStatus, sem_keys(keys, name), {});
  Status s = decode_status(r.get());
  s.name = std::string(name);
  return s;
}

Freed wait_free(Connection& conn, const Keys& keys, std::string_view name, std::int64_t limit,
                std::int64_t permits, std::optional<Millis> wait) {
  check_name("semaphore", name);
  TakeOptions asked;
  asked.limit = limit;
  asked.permits = permits;
  check_options(asked);
  Freed out;
  out.name = std::string(name);
  out.limit = limit;
  out.permits = permits;
  // The most permits in use that leave ours free, before the token: the release script reads
  // it from the member (lib/sem.lua, sem_wake_watchers).
  std::string watcher = fmt::format("{}:{}", limit - permits, random_token());
  Args k = sem_keys(keys, name);
  auto start = Clock::now();
  out.free = watching::wait_until_free(
      conn, k[9] + ":" + watcher, wait, [&](Millis life) -> watching::Look {
        Reply r = eval(conn, lua::kSemWatch, k,
                       {watcher, std::to_string(life.count()), std::to_string(keys.history_cap())});
        out.in_use = element_integer(r.get(), 1, kScripts);
        out.holders = element_integer(r.get(), 2, kScripts);
        // Holders' leases may end any time: the heartbeat looks again.
        return {element_integer(r.get(), 0, kScripts) == 1, Millis::max()};
      });
  out.waited_ms = since(start).count();
  return out;
}

Call status_call(const Keys& keys, std::string_view name) {
  return script_call(lua::kSemStatus, sem_keys(keys, name), {});
}

void decode_take(const redisReply* r, Taken& out) {
  out.holders = element_integer(r, 1, kScripts);
  out.in_use = element_integer(r, 2, kScripts);
  out.ahead = element_integer(r, 3, kScripts);
  out.acquired = element_integer(r, 0, kScripts) == 1;
  // A holder taking again keeps what it holds.
  if (out.acquired) out.permits = element_integer(r, 4, kScripts);
}

Status decode_status(const redisReply* r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 || (r->elements - 3) % 6 != 0) {
    throw Error(kServer, "unexpected reply from the sem_status script");
  }
  Status s;
  s.limit = reply_integer(r->element[0]);
  s.in_use = reply_integer(r->element[1]);
  s.waiting = reply_integer(r->element[2]);
  for (std::size_t i = 3; i + 5 < r->elements; i += 6) {
    s.holders.push_back({reply_string(r->element[i]),
                         reply_integer(r->element[i + 1]),
                         reply_integer(r->element[i + 2]),
                         {unpack(reply_string(r->element[i + 3])), reply_integer(r->element[i + 4]),
                          reply_integer(r->element[i + 5])}});
  }
  return s;
}

Lease lease(Connection& conn, const Keys& keys, const Taken& taken, Millis ttl) {
  Lease held = connection_lease(
      conn, ttl, taken.sent,
      [&conn, &keys, name = taken.name, token = taken.token, ttl] {
        return refresh(conn, keys, name, token, ttl);
      },
      [&conn, &keys, name = taken.name, token = taken.token, who = taken.who,
       waited = taken.waited_ms](const Ending& ending) {
        return release_waking(conn, keys, name, token, ending.of_taker(who, waited)).woke;
      });
  // The holders' zset, where each holder's token is a member: another holder's renewal changes
  // it too, which only costs a renewal, as often as the supervisor lets one through.
  held.watched = {{&conn, {keys.object(kType, taken.name)}}};
  return held;
}

}  // namespace rcoord::semaphore
