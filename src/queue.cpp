#include "queue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "script.hpp"
#include "signals.hpp"
#include "waiting.hpp"

namespace rcoord::queue {
namespace {

using waiting::block_seconds;
using waiting::jittered;
using waiting::since;

using Clock = std::chrono::steady_clock;
constexpr std::string_view kType = "queue";

// A blocked popper is woken by a wake-up or at the next due time; if a wake-up is missed
// (a narrow race between two poppers, see queue_pop.lua) it looks again anyway, after 0.5 s
// at first, backing off to 5 s, with jitter.
constexpr Millis kFirstBackoff{500};
constexpr Millis kMaxBackoff{5000};

// One script call carries at most this many bytes of messages (a huge batch would hold the
// server for the whole copy).
constexpr std::size_t kMaxBatchBytes = 8u << 20;
// purge and replay work through long sets this many at a time (the scripts' own bound).
constexpr std::int64_t kChunk = 1000;

// The ten keys every queue script takes, in the order of their KEYS contract.
Args queue_keys(const Keys& keys, std::string_view name) {
  check_name("queue", name);
  return {keys.object(kType, name),          keys.aux(kType, name, "ready"),
          keys.aux(kType, name, "delayed"),  keys.aux(kType, name, "inflight"),
          keys.aux(kType, name, "dead"),     keys.aux(kType, name, "attempts"),
          keys.aux(kType, name, "wake"),     keys.aux(kType, name, "seq"),
          keys.aux(kType, name, "consumer"), keys.history(kType, name)};
}

void check_id(std::string_view id) {
  if (id.empty()) throw Error(kUsage, "empty message id", "give the id that pop printed");
}

const redisReply* array_of(const redisReply* r, std::string_view script) {
  if (r->type != REDIS_REPLY_ARRAY) {
    throw Error(kServer, fmt::format("unexpected reply from the {} script", script));
  }
  return r;
}

// {id, message, attempt, ...} from element `first` on.
std::vector<Message> messages_from(const redisReply* r, std::size_t first) {
  std::vector<Message> out;
  if (r->elements < first || (r->elements - first) % 3 != 0) {
    throw Error(kServer, "unexpected reply from a queue script");
  }
  out.reserve((r->elements - first) / 3);
  for (std::size_t i = first; i + 2 < r->elements; i += 3) {
    out.push_back({reply_string(r->element[i]),
                   reply_string(r->element[i + 1]),
                   reply_integer(r->element[i + 2]),
                   -1,
                   {}});
  }
  return out;
}

void check_positive(std::string_view option, std::int64_t value) {
  if (value < 1) {
    throw Error(kUsage, fmt::format("{} must be at least 1, not {}", option, value),
                fmt::format("use e.g. {} 10", option));
  }
}

}  // namespace

std::int64_t push(Connection& conn, const Keys& keys, std::string_view name,
                  const std::vector<std::string>& messages, Millis delay) {
  Args k = queue_keys(keys, name);
  if (delay.count() < 0) throw Error(kUsage, "--delay must not be negative", "use e.g. 30s");
  Args args{std::to_string(delay.count())};
  std::size_t bytes = 0;
  std::int64_t length = -1;
  for (const auto& m : messages) {
    if (args.size() > 1 && bytes + m.size() > kMaxBatchBytes) {
      length = reply_integer(eval(conn, lua::kQueuePush, k, args).get());
      args.resize(1);
      bytes = 0;
    }
    args.push_back(m);
    bytes += m.size();
  }
  if (args.size() > 1 || length < 0)
    length = reply_integer(eval(conn, lua::kQueuePush, k, args).get());
  return length;
}

Popped pop(Connection& conn, const Keys& keys, std::string_view name, const PopOptions& opts) {
  Args k = queue_keys(keys, name);
  check_positive("--count", opts.count);
  check_positive("--max-attempts", opts.max_attempts);
  const std::string& wake_key = k[6];
  Args args{std::to_string(opts.count),
            opts.lifo ? "1" : "0",
            std::to_string(opts.ack_timeout ? opts.ack_timeout->count() : 0),
            std::to_string(opts.max_attempts),
            opts.wait ? "1" : "0",
            opts.who,
            std::to_string(keys.history_cap())};
  Popped result;
  result.name = std::string(name);
  auto start = Clock::now();
  Millis backoff = kFirstBackoff;
  for (;;) {
    Reply r;
    {
      // Once the script ran, its reply may hold messages that are no longer in the queue:
      // a signal must not make us drop that reply.
      signals::Uninterruptible quiet;
      result.sent = Clock::now();
      r = eval(conn, lua::kQueuePop, k, args);
    }
    if (opts.on_alive) opts.on_alive();
    std::int64_t next_ms = decode_pop(r.get(), result.messages);
    result.waited_ms = since(start).count();
    if (!result.messages.empty() || !opts.wait) return result;
    Millis left = *opts.wait == Millis::max() ? Millis::max() : *opts.wait - since(start);
    if (left.count() <= 0) return result;
    if (next_ms == 0) continue;  // more became due meanwhile: look again at once
    // Sleep until a push (or anything that changes what is due) wakes us, the next delayed
    // message or lease is due, or the fallback.
    Millis block = std::min(left, jittered(backoff));
    if (next_ms > 0) block = std::min(block, Millis(next_ms + 1));
    block = waiting::cap_block(block, conn.timeout());
    Reply woken = conn.command_blocking(
        {"BLMOVE", wake_key, wake_key, "LEFT", "LEFT", block_seconds(block)}, block);
    backoff = reply_is_nil(woken.get()) ? std::min(backoff * 2, kMaxBackoff) : kFirstBackoff;
  }
}

bool ack(Connection& conn, const Keys& keys, std::string_view name, std::string_view id,
         std::int64_t attempt) {
  Args k = queue_keys(keys, name);
  check_id(id);
  Reply r = eval(conn, lua::kQueueAck, k, {std::string(id), std::to_string(attempt)});
  return reply_integer(r.get()) == 1;
}

NackState nack(Connection& conn, const Keys& keys, std::string_view name, std::string_view id,
               const NackOptions& opts) {
  Args k = queue_keys(keys, name);
  check_id(id);
  if (opts.delay.count() < 0) throw Error(kUsage, "--delay must not be negative", "use e.g. 30s");
  Reply r = eval(conn, lua::kQueueNack, k,
                 {std::string(id), std::to_string(opts.attempt), std::to_string(opts.delay.count()),
                  opts.uncounted ? "1" : "0", std::to_string(keys.history_cap())});
  switch (reply_integer(r.get())) {
    case 1:
      return NackState::kReady;
    case 2:
      return NackState::kDelayed;
    case 3:
      return NackState::kDead;
    default:
      return NackState::kNotInFlight;
  }
}

bool extend(Connection& conn, const Keys& keys, std::string_view name, std::string_view id,
            std::int64_t attempt, Millis lease) {
  Args k = queue_keys(keys, name);
  check_id(id);
  Reply r = eval(conn, lua::kQueueExtend, k,
                 {std::string(id), std::to_string(attempt), std::to_string(lease.count())});
  return reply_integer(r.get()) == 1;
}

Fate fate(Connection& conn, const Keys& keys, std::string_view name, std::string_view id) {
  Args k = queue_keys(keys, name);
  check_id(id);
  // Two reads of one slot in one write; a read only, so no script.
  std::vector<Reply> r =
      conn.pipeline({{"HEXISTS", k[0], std::string(id)}, {"ZSCORE", k[4], std::string(id)}});
  check_key_reply(r[0], "HEXISTS", k[0]);
  check_key_reply(r[1], "ZSCORE", k[4]);
  if (reply_integer(r[0].get()) == 0) return Fate::kGone;
  return reply_is_nil(r[1].get()) ? Fate::kPending : Fate::kDead;
}

Stats stats(Connection& conn, const Keys& keys, std::string_view name) {
  Reply r =
      eval(conn, lua::kQueueStats, queue_keys(keys, name), {std::to_string(keys.history_cap())});
  return decode_stats(r.get());
}

Call stats_call(const Keys& keys, std::string_view name) {
  return script_call(lua::kQueueStats, queue_keys(keys, name),
                     {std::to_string(keys.history_cap())});
}

std::vector<Message> peek(Connection& conn, const Keys& keys, std::string_view name,
                          std::int64_t count) {
  Args k = queue_keys(keys, name);
  check_positive("--count", count);
  Reply r =
      eval(conn, lua::kQueuePeek, k, {std::to_string(count), std::to_string(keys.history_cap())});
  return decode_messages(r.get(), "queue_peek");
}

std::vector<Message> in_flight(Connection& conn, const Keys& keys, std::string_view name,
                               std::int64_t count) {
  Args k = queue_keys(keys, name);
  check_positive("--count", count);
  Reply r = eval(conn, lua::kQueueInflight, k, {std::to_string(count)});
  const redisReply* a = array_of(r.get(), "queue_inflight");
  if (a->elements % 7 != 0) throw Error(kServer, "unexpected reply from the queue_inflight script");
  std::vector<Message> out;
  for (std::size_t i = 0; i + 6 < a->elements; i += 7) {
    Message m;
    m.id = reply_string(a->element[i]);
    m.message = reply_string(a->element[i + 1]);
    m.attempt = reply_integer(a->element[i + 2]);
    m.lease_ms = reply_integer(a->element[i + 3]);
    m.consumer = {unpack(reply_string(a->element[i + 4])), reply_integer(a->element[i + 5]),
                  reply_integer(a->element[i + 6])};
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Message> dead(Connection& conn, const Keys& keys, std::string_view name,
                          std::int64_t offset, std::int64_t count) {
  Args k = queue_keys(keys, name);
  check_positive("--count", count);
  Reply r =
      eval(conn, lua::kQueueDead, k,
           {std::to_string(offset), std::to_string(count), std::to_string(keys.history_cap())});
  return decode_messages(r.get(), "queue_dead");
}

std::int64_t replay(Connection& conn, const Keys& keys, std::string_view name,
                    const std::vector<std::string>& ids, const std::string& who) {
  Args k = queue_keys(keys, name);
  const Args recorded{std::to_string(keys.history_cap()), who};
  std::int64_t total = 0;
  if (ids.empty()) {
    for (;;) {
      std::int64_t n = reply_integer(eval(conn, lua::kQueueReplay, k, recorded).get());
      total += n;
      if (n == 0) return total;
    }
  }
  for (std::size_t i = 0; i < ids.size(); i += static_cast<std::size_t>(kChunk)) {
    auto end = ids.begin() + static_cast<std::ptrdiff_t>(
                                 std::min(ids.size(), i + static_cast<std::size_t>(kChunk)));
    Args chunk = recorded;
    chunk.insert(chunk.end(), ids.begin() + static_cast<std::ptrdiff_t>(i), end);
    for (std::size_t j = recorded.size(); j < chunk.size(); ++j) check_id(chunk[j]);
    total += reply_integer(eval(conn, lua::kQueueReplay, k, chunk).get());
  }
  return total;
}

std::int64_t purge(Connection& conn, const Keys& keys, std::string_view name, bool dead_only,
                   const std::string& who) {
  Args k = queue_keys(keys, name);
  std::int64_t total = 0;
  for (;;) {
    std::int64_t n = reply_integer(
        eval(conn, lua::kQueuePurge, k,
             {dead_only ? "dead" : "waiting", std::to_string(keys.history_cap()), who})
            .get());
    total += n;
    if (n < kChunk) return total;
  }
}

std::int64_t decode_pop(const redisReply* r, std::vector<Message>& messages) {
  const redisReply* arr = array_of(r, "queue_pop");
  if (arr->elements < 1) throw Error(kServer, "unexpected reply from the queue_pop script");
  std::int64_t next_ms = reply_integer(arr->element[0]);
  messages = messages_from(arr, 1);
  return next_ms;
}

std::vector<Message> decode_messages(const redisReply* r, std::string_view script) {
  return messages_from(array_of(r, script), 0);
}

Stats decode_stats(const redisReply* r) {
  const redisReply* arr = array_of(r, "queue_stats");
  if (arr->elements != 4) throw Error(kServer, "unexpected reply from the queue_stats script");
  return {reply_integer(arr->element[0]), reply_integer(arr->element[1]),
          reply_integer(arr->element[2]), reply_integer(arr->element[3])};
}

}  // namespace rcoord::queue
