#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "errors.hpp"
#include "gate.hpp"
#include "gate_parts.hpp"
#include "limit.hpp"
#include "lock.hpp"
#include "lua_scripts.hpp"
#include "script.hpp"
#include "semaphore.hpp"
#include "signals.hpp"
#include "token.hpp"
#include "waiting.hpp"

// Taking a gate (gate.hpp's take): on one server one script, gate_take.lua, all or nothing;
// on a Redis Cluster the parts one at a time in the global order, giving back on a refusal.

namespace rcoord::gate {
namespace {

using TakeClock = std::chrono::steady_clock;
// How often a waiting gate tries again at least: its place among a lock's waiting writers or
// in a semaphore's queue lasts three such heartbeats.
constexpr Millis kGateHeartbeat = lock::kWaiterHeartbeat;

// What a try of a gate passes to each part's take besides the gate's options.
struct PartTry {
  bool enlist = false;          ///< a refusal leaves us among its waiters
  std::int64_t busy_since = 0;  ///< the server time of this call's first refusal by the part
};

// The options of a lock or semaphore part's single try (try_gate_part's).
lock::AcquireOptions gate_lock_options(const Part& part, const std::string& token,
                                       const TakeOptions& opts, PartTry how) {
  lock::AcquireOptions lo;
  lo.ttl = opts.ttl;
  lo.token = token;
  lo.shared = part.kind == Kind::kSharedLock;
  lo.who = opts.who;
  lo.enlist = how.enlist;
  lo.busy_is_final = !how.enlist;
  lo.busy_since = how.busy_since;
  return lo;
}

semaphore::TakeOptions gate_sem_options(const Part& part, const std::string& token,
                                        const TakeOptions& opts, PartTry how) {
  semaphore::TakeOptions so;
  so.limit = part.limit;
  so.permits = part.permits;
  so.ttl = opts.ttl;
  so.token = token;
  so.who = opts.who;
  so.enlist = how.enlist;
  so.busy_since = how.busy_since;
  return so;
}

// One single try of a lock or semaphore part.
PartTaken try_gate_part(Connection& conn, const Keys& keys, const Part& part,
                        const std::string& token, const TakeOptions& opts, PartTry how) {
  PartTaken out{part};
  if (part.kind == Kind::kSem) {
    auto r = semaphore::take(conn, keys, part.name, gate_sem_options(part, token, opts, how));
    out.acquired = r.acquired;
    out.holders = r.holders;
    out.in_use = r.in_use;
    out.sent = r.sent;
    out.busy_since = r.busy_since;
    return out;
  }
  auto r = lock::acquire(conn, keys, part.name, gate_lock_options(part, token, opts, how));
  out.acquired = r.acquired;
  out.fence = r.fence;
  out.ttl_ms = r.ttl_ms;
  out.sent = r.sent;
  out.busy_since = r.busy_since;
  return out;
}

// The list a waiter on `part` is woken on (lock.cpp, semaphore.cpp).
std::string gate_wake_key(const Keys& keys, const Part& part, std::string_view token) {
  switch (part.kind) {
    case Kind::kLock:
      return keys.aux("lock", part.name, "wake");
    case Kind::kSharedLock:
      return keys.aux("lock", part.name, "rwake:") + std::string(token);
    default:
      return keys.aux("sem", part.name, "wake:") + std::string(token);
  }
}

void write_gate_record(Connection& conn, const Keys& keys, std::string_view token,
                       const std::vector<PartTaken>& parts, Millis ttl) {
  std::vector<Part> recorded;
  recorded.reserve(parts.size());
  for (const auto& p : parts) recorded.push_back(p.part);
  eval(conn, lua::kGateRecord, {record_key(keys, token)}, record_args(recorded, ttl));
}

// Gives back, in reverse order, the lock and semaphore parts of `taken` that were acquired.
void give_back_taken(Connection& conn, const Keys& keys, const std::vector<PartTaken>& taken,
                     std::string_view token, const Ending& ending) {
  for (std::size_t i = taken.size(); i-- > 0;) {
    if (taken[i].acquired && taken[i].part.kind != Kind::kRate) {
      give_back_part(conn, keys, taken[i].part, token, ending);
    }
  }
}

// Not enlisted among the waiters of any part.
constexpr auto kGateNotEnlisted = static_cast<std::size_t>(-1);

// What one try of the whole gate ended with: `parts` filled as Taken::parts.
struct GateAttempt {
  bool refused = false;
  std::size_t at = 0;  ///< refused: the index of the part that refused
  /// The server time (ms) of the try, where the gate_take script said it (0: not said).
  std::int64_t server_ms = 0;
};

// The server answered CROSSSLOT: the keys of the parts live in different slots of a Redis
// Cluster, and the script did not run.
bool gate_crossslot(const Error& e) {
  return e.code() == kServer && std::string_view(e.what()).find("CROSSSLOT") != std::string::npos;
}

// What the tries of one call share, and what each passes on to the next: the server times of
// the call's first refusal, by the gate and by each part, from which their waits are counted.
struct GateCall {
  const std::vector<Part>& ordered;
  const std::string& token;
  const TakeOptions& opts;
  bool waiting = false;
  std::size_t attempt = 0;
  std::int64_t busy_since = 0;           ///< the gate's first refusal (0: none yet)
  std::vector<std::int64_t> part_since;  ///< each part's (by ordered's index)

  PartTry part_try(std::size_t i) const { return {waiting, part_since[i]}; }
  // A try refused by part `at`, whose answer is `no`: what the next tries pass on.
  void refused(std::size_t at, std::int64_t server_ms, const PartTaken& no) {
    if (busy_since == 0) busy_since = server_ms;
    if (part_since[at] == 0) part_since[at] = no.busy_since;
  }
};

// One try of every part in one script (gate_take), all or nothing, the record written with
// them; nullopt on a Redis Cluster, where the script cannot run (nothing ran).
std::optional<GateAttempt> gate_one_script(Connection& conn, const Keys& keys, const GateCall& gc,
                                           std::vector<PartTaken>& out) {
  const std::vector<Part>& ordered = gc.ordered;
  const std::string& token = gc.token;
  const TakeOptions& opts = gc.opts;
  Args k;
  Args args{std::to_string(ordered.size())};
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const Part& part = ordered[i];
    Call call;
    if (part.kind == Kind::kSem) {
      call = semaphore::take_call(keys, part.name, token,
                                  gate_sem_options(part, token, opts, gc.part_try(i)));
    } else if (part.kind == Kind::kRate) {
      call = limit::decision_call(keys, part.name, rate_params(part), -1, false,
                                  fmt::format("{}:{}:{}", token, gc.attempt, i));
    } else {
      call = lock::acquire_call(keys, part.name, token,
                                gate_lock_options(part, token, opts, gc.part_try(i)));
    }
    // EVALSHA sha numkeys key... arg...
    auto nkeys = static_cast<std::ptrdiff_t>(std::stoul(call.args[2]));
    auto first_key = call.args.begin() + 3;
    args.emplace_back(kind_name(part.kind));
    args.push_back(call.args[2]);
    args.push_back(std::to_string(call.args.end() - first_key - nkeys));
    args.insert(args.end(), first_key + nkeys, call.args.end());
    k.insert(k.end(), first_key, first_key + nkeys);
  }
  k.push_back(record_key(keys, token));
  k.push_back(counters_key(keys, ordered));
  args.push_back(gc.busy_since > 0 ? std::to_string(gc.busy_since) : std::string());
  Args record = record_args(ordered, opts.ttl);
  args.insert(args.end(), record.begin(), record.end());

  // A reply lost after the request went out: whatever the script took is given back.
  Take take{lua::kGateTake, k, args,
            [&] { give_back_all(conn, keys, ordered, token, {.who = opts.who}); },
            [](const redisReply* reply) { return element_integer(reply, 0, "gate_take") == 1; }};
  auto sent = TakeClock::now();
  Reply r;
  try {
    r = eval_taking(conn, take);
  } catch (const Error& e) {
    if (gate_crossslot(e)) return std::nullopt;
    throw;
  }
  const redisReply* reply = r.get();
  GateAttempt result;
  result.refused = !take.took(reply);
  // {granted, refusing index, server ms, each part's answer}
  constexpr std::size_t kHead = 3;
  std::size_t answered = reply->elements > kHead ? reply->elements - kHead : 0;
  if (answered == 0 || answered > ordered.size()) {
    throw Error(kServer, "unexpected reply from the gate_take script");
  }
  result.at = answered - 1;
  result.server_ms = element_integer(reply, 2, "gate_take");
  for (std::size_t i = 0; i < answered; ++i) {
    const redisReply* one = reply->element[i + kHead];
    PartTaken p{ordered[i]};
    p.sent = sent;
    p.acquired = element_integer(one, 0, "gate_take") == 1;
    if (p.part.kind == Kind::kRate) {
      limit::Raw raw = limit::decode_raw(one);
      p.remaining = raw.remaining;
      p.retry_after_ms = limit::ceil_ms(raw.retry_after_us);
    } else if (p.part.kind == Kind::kSem) {
      semaphore::Taken t;
      semaphore::decode_take(one, t);
      p.holders = t.holders;
      p.in_use = t.in_use;
      // a refusal answers its first busy time after the permits a take answers
      p.busy_since = p.acquired ? 0 : element_integer(one, 5, "gate_take");
    } else {
      p.fence = p.acquired ? element_integer(one, 1, "gate_take") : 0;
      p.ttl_ms = p.acquired ? 0 : element_integer(one, 2, "gate_take");
      // a refusal of a lock answers its first busy time where a take answers `refreshed`
      p.busy_since = p.acquired ? 0 : element_integer(one, 3, "gate_take");
    }
    out.push_back(std::move(p));
  }
  return result;
}

// One try of every part of `ordered` one at a time (the take of a Cluster, where the parts
// live in different slots): the first refusal gives back what this try took; rates last, a
// refusing rate giving back the rates consumed before it. `enlisted` (ordered's index of the
// part we wait among, or kGateNotEnlisted) is updated. The record is written when every part
// is held.
GateAttempt gate_ordered_try(Connection& conn, const Keys& keys, const GateCall& gc,
                             std::size_t& enlisted, std::vector<PartTaken>& out) {
  const std::vector<Part>& ordered = gc.ordered;
  const std::string& token = gc.token;
  const TakeOptions& opts = gc.opts;
  const Ending withdrawn{.how = Ending::How::kWithdrawn, .who = opts.who};
  const Ending given_back{.who = opts.who};
  bool refused = false;
  std::size_t i = 0;
  for (; i < ordered.size() && ordered[i].kind != Kind::kRate; ++i) {
    out.push_back(try_gate_part(conn, keys, ordered[i], token, opts, gc.part_try(i)));
    if (!out.back().acquired) {
      refused = true;
      break;
    }
  }
  // A place among the waiters of a part this attempt did not reach: leave it (one that was
  // taken was left by its take, the one refused again keeps it).
  if (enlisted != kGateNotEnlisted && refused && enlisted > i) {
    give_back_part(conn, keys, ordered[enlisted], token, withdrawn);
  }
  enlisted = kGateNotEnlisted;
  if (refused) {
    give_back_taken(conn, keys, out, token, given_back);
    if (gc.waiting) enlisted = i;
    return {true, i};
  }
  // Every lock and permit is held: now the rates, each given back if a later one refuses.
  std::vector<std::pair<limit::Raw, std::string>> consumed;
  for (; i < ordered.size(); ++i) {
    PartTaken p{ordered[i]};
    p.sent = TakeClock::now();
    std::string member = fmt::format("{}:{}:{}", token, gc.attempt, i);
    auto params = rate_params(ordered[i]);
    auto raw = limit::evaluate(conn, keys, ordered[i].name, params, -1, false, member);
    p.acquired = raw.allowed;
    p.remaining = raw.remaining;
    p.retry_after_ms = limit::ceil_ms(raw.retry_after_us);
    out.push_back(p);
    if (!raw.allowed) {
      refused = true;
      break;
    }
    consumed.emplace_back(raw, member);
  }
  if (refused) {
    std::size_t first_rate = out.size() - 1 - consumed.size();
    for (std::size_t c = 0; c < consumed.size(); ++c) {
      const Part& rp = out[first_rate + c].part;
      limit::Raw slot = consumed[c].first;
      // A slot consumed now is not "due" in the future: give it back whatever the clock.
      slot.due_us = limit::kForeverUs;
      limit::cancel(conn, keys, rp.name, rate_params(rp), slot, consumed[c].second);
    }
    give_back_taken(conn, keys, out, token, given_back);
    return {true, i};
  }
  write_gate_record(conn, keys, token, out, opts.ttl);
  return {false, 0};
}

// The ordered take's outcome in the gate's counters (the one script counts its own): every
// part held, or the call's first refusal, whose server time the call's next tries pass on.
void count_ordered(Connection& conn, const Keys& keys, const GateCall& gc, GateAttempt& attempt) {
  if (!attempt.refused) {
    count_take(conn, keys, gc.ordered, "acquired", gc.busy_since);
  } else if (gc.busy_since == 0) {
    attempt.server_ms = count_take(conn, keys, gc.ordered, "busy", 0);
  }
}

// gate_ordered_try, whose error (a key that holds another type, a lost server) gives back what
// the try took, as a refusal does, before it goes on: a gate that fails holds nothing. The
// give-back is best effort (the server may be gone: the parts then end with their TTL), and a
// rate slot consumed stays consumed.
GateAttempt gate_ordered(Connection& conn, const Keys& keys, const GateCall& gc,
                         std::size_t& enlisted, std::vector<PartTaken>& out) {
  try {
    GateAttempt tried = gate_ordered_try(conn, keys, gc, enlisted, out);
    count_ordered(conn, keys, gc, tried);
    return tried;
  } catch (const Error&) {
    try {
      give_back_taken(conn, keys, out, gc.token, Ending{.who = gc.opts.who});
    } catch (const Error&) {
      // Unreachable now: the parts end with their TTL; the first error is the one to say.
    }
    throw;
  }
}

}  // namespace

Taken take(Connection& conn, const Keys& keys, const std::vector<Part>& parts,
           const TakeOptions& opts) {
  std::vector<Part> ordered = parts;
  order(ordered);
  Taken result;
  result.token = opts.token.empty() ? random_token() : opts.token;
  result.who = opts.who;
  const std::string& token = result.token;
  const bool waiting = opts.wait.has_value();
  const Ending withdrawn{.how = Ending::How::kWithdrawn, .who = opts.who};
  auto start = TakeClock::now();
  // The lock or semaphore part we are enlisted on as a waiter (ordered's index), if any.
  std::size_t enlisted = kGateNotEnlisted;
  // One script until the server turns out to be a Redis Cluster (then the ordered take).
  bool one_script = true;
  GateCall gc{ordered, token, opts, waiting, 0, 0, std::vector<std::int64_t>(ordered.size(), 0)};
  for (std::size_t attempt = 0;; ++attempt) {
    result.parts.clear();
    gc.attempt = attempt;
    std::optional<GateAttempt> tried;
    if (one_script) {
      tried = gate_one_script(conn, keys, gc, result.parts);
      one_script = tried.has_value();
      if (tried) {
        // Refused by another part than the one we wait among: leave that place. (A granted
        // try left every place by taking.)
        if (enlisted != kGateNotEnlisted && tried->refused && enlisted != tried->at) {
          give_back_part(conn, keys, ordered[enlisted], token, withdrawn);
        }
        bool enlists = tried->refused && waiting && ordered[tried->at].kind != Kind::kRate;
        enlisted = enlists ? tried->at : kGateNotEnlisted;
      }
    }
    if (!tried) {
      tried = gate_ordered(conn, keys, gc, enlisted, result.parts);
    }
    if (tried->refused) gc.refused(tried->at, tried->server_ms, result.parts.back());
    result.waited_ms = waiting::since(start).count();
    if (!tried->refused) {
      result.acquired = true;
      result.ttl_ms = opts.ttl.count();
      return result;
    }
    result.refused = result.parts.size() - 1;
    const PartTaken& no = result.parts.back();
    if (!waiting) return result;
    Millis left = *opts.wait == Millis::max() ? Millis::max() : *opts.wait - waiting::since(start);
    if (left.count() <= 0 || (no.part.kind == Kind::kRate && no.retry_after_ms < 0)) {
      if (enlisted != kGateNotEnlisted) {
        give_back_part(conn, keys, ordered[enlisted], token, withdrawn);
      }
      return result;
    }
    if (no.part.kind == Kind::kRate) {
      // Nothing wakes a rate: sleep until its slot is due (or the heartbeat), then try again.
      Millis sleep = std::min({left, Millis(no.retry_after_ms), waiting::jittered(kGateHeartbeat)});
      if (!signals::sleep_until(TakeClock::now() + sleep)) {
        throw Error(kInterrupted, "interrupted while waiting for a gate", "nothing is held");
      }
      continue;
    }
    Millis block = waiting::jittered(kGateHeartbeat);
    if (no.part.kind != Kind::kSem && no.ttl_ms > 0) {
      block = std::min(block, waiting::jittered(Millis(no.ttl_ms)));
    }
    block = waiting::cap_block(std::min(left, block), conn.timeout());
    conn.command_blocking(
        {"BLPOP", gate_wake_key(keys, no.part, token), waiting::block_seconds(block)}, block);
  }
}

}  // namespace rcoord::gate
