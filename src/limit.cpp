#include "limit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <ctime>
#include <numeric>
#include <optional>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "script.hpp"
#include "signals.hpp"
#include "token.hpp"

namespace rcoord::limit {
namespace {

// What the element accessors name when a script reply has not the shape they expect.
constexpr std::string_view kScripts = "a limit script";

using Clock = std::chrono::steady_clock;
constexpr std::string_view kType = "limit";

constexpr std::string_view kNames[] = {"gcra", "token-bucket", "sliding-window", "fixed-window"};

const Script& script_of(Algo algo) {
  switch (algo) {
    case Algo::kGcra:
      return lua::kLimitGcra;
    case Algo::kTokenBucket:
      return lua::kLimitTokenBucket;
    case Algo::kSlidingWindow:
      return lua::kLimitSlidingWindow;
    case Algo::kFixedWindow:
      return lua::kLimitFixedWindow;
  }
  return lua::kLimitGcra;
}

Args key_names(const Keys& keys, std::string_view key) {
  return {keys.object(kType, key), keys.aux(kType, key, "log")};
}

}  // namespace

std::optional<Algo> parse_algo(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kNames); ++i) {
    if (kNames[i] == name) return static_cast<Algo>(i);
  }
  return std::nullopt;
}

std::string_view algo_name(Algo algo) { return kNames[static_cast<std::size_t>(algo)]; }

Params make_params(Algo algo, Rate rate, std::optional<std::int64_t> burst, std::int64_t cost) {
  if (rate.count <= 0) {
    throw Error(kUsage, "--rate must allow at least 1 per period",
                "use e.g. --rate 10/s, or --rate 1/h for a slow one");
  }
  if (rate.period.count() <= 0) throw Error(kUsage, "--rate needs a positive period");
  Params p;
  p.algo = algo;
  p.rate = rate;
  p.burst = burst.value_or(rate.count);
  p.cost = cost;
  if (p.burst < 1) {
    throw Error(kUsage, fmt::format("bad --burst {}: it must be at least 1", p.burst),
                "leave it out to allow N of N/PERIOD at once");
  }
  if (p.cost < 1) {
    throw Error(kUsage, fmt::format("bad --cost {}: it must be at least 1", p.cost),
                "use --cost 1 (the default) or more; 'limit status' looks without consuming");
  }
  // period µs ≤ ten years (the duration parser's limit) and N < 10^15: no overflow here.
  std::int64_t period_us = rate.period.count() * 1000;
  std::int64_t g = std::gcd(period_us, rate.count);
  p.unit = period_us / g;
  p.drain = rate.count / g;
  std::int64_t max_burst = kMaxCapacity / p.unit;
  if (p.burst > max_burst) {
    std::string rate_text = fmt::format("{}/{}", rate.count, format_duration(rate.period));
    if (!burst) {
      throw Error(kUsage,
                  fmt::format("--rate {} needs a smaller burst than its N: at most {}", rate_text,
                              max_burst),
                  "give --burst explicitly");
    }
    throw Error(kUsage,
                fmt::format("--burst {} is too large for --rate {}: at most {}", p.burst, rate_text,
                            max_burst),
                "lower --burst, or state the rate over a shorter period");
  }
  if (algo == Algo::kSlidingWindow && p.burst > kMaxLogBurst) {
    throw Error(kUsage,
                fmt::format("--burst {} is too large for the sliding-window log: at most {}",
                            p.burst, kMaxLogBurst),
                "use --algo gcra, which keeps two numbers whatever the burst");
  }
  // burst × unit ≤ 2^51, so the product is exact; round the window up (never more allowed).
  std::int64_t span = p.burst * p.unit;
  p.window_us = std::max<std::int64_t>(1, (span + p.drain - 1) / p.drain);
  return p;
}

std::int64_t ceil_ms(std::int64_t us) {
  if (us < 0) return -1;
  // Not (us + 999) / 1000: a reply near INT64_MAX must not overflow.
  return us / 1000 + (us % 1000 != 0 ? 1 : 0);
}

namespace {

Args decision_args(const Params& p, std::int64_t max_wait_us, bool peek, std::string_view member) {
  return {std::to_string(p.unit),
          std::to_string(p.drain),
          std::to_string(p.burst),
          std::to_string(p.cost),
          std::to_string(p.window_us),
          std::to_string(max_wait_us),
          peek ? "1" : "0",
          std::string(member.empty() ? "-" : member)};
}

// A stored decimal number; 0 for a missing, malformed or negative one.
std::int64_t positive_or_zero(std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < 0) return 0;
  return v;
}

}  // namespace

Raw evaluate(Connection& conn, const Keys& keys, std::string_view key, const Params& p,
             std::int64_t max_wait_us, bool peek, std::string_view member) {
  check_name("limit", key);
  // A peek writes nothing, so there is nothing for replicas to acknowledge (the scripts
  // also write, so they cannot declare no-writes).
  std::optional<ReplicaWaitSuspended> no_wait;
  if (peek) no_wait.emplace(conn);
  Reply r = eval(conn, script_of(p.algo), key_names(keys, key),
                 decision_args(p, max_wait_us, peek, member));
  return decode_raw(r.get());
}

Call decision_call(const Keys& keys, std::string_view key, const Params& p,
                   std::int64_t max_wait_us, bool peek, std::string_view member) {
  return script_call(script_of(p.algo), key_names(keys, key),
                     decision_args(p, max_wait_us, peek, member));
}

Call peek_call(const Keys& keys, std::string_view key, const Params& p) {
  return decision_call(keys, key, p, -1, true, {});
}

Args stored_params_command(const Keys& keys, std::string_view key) {
  return {"HMGET", keys.object(kType, key), "algo", "unit", "drain", "burst", "window"};
}

std::optional<Params> decode_stored_params(const redisReply* fields) {
  if (fields->type != REDIS_REPLY_ARRAY || fields->elements != 5) {
    throw Error(kServer, "unexpected reply to HMGET");
  }
  auto field = [&](std::size_t i) { return reply_string(fields->element[i]); };
  auto algo = parse_algo(field(0));
  auto number = [&](std::size_t i) { return positive_or_zero(field(i)); };
  if (!algo || number(3) < 1) return std::nullopt;
  Params p;
  p.algo = *algo;
  p.burst = number(3);
  p.cost = 1;
  p.unit = number(1);
  p.drain = number(2);
  p.window_us = number(4);
  bool complete = (*algo == Algo::kGcra || *algo == Algo::kTokenBucket) ? p.unit > 0 && p.drain > 0
                                                                        : p.window_us > 0;
  if (!complete) return std::nullopt;
  return p;
}

Raw decode_raw(const redisReply* r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 9) {
    throw Error(kServer, "unexpected reply from a limit script");
  }
  Raw raw;
  raw.allowed = element_integer(r, 0, kScripts) == 1;
  raw.limit = element_integer(r, 1, kScripts);
  raw.remaining = element_integer(r, 2, kScripts);
  raw.retry_after_us = element_integer(r, 3, kScripts);
  raw.reset_after_us = element_integer(r, 4, kScripts);
  raw.wait_us = element_integer(r, 5, kScripts);
  raw.now_us = element_integer(r, 6, kScripts);
  raw.due_us = element_integer(r, 7, kScripts);
  raw.slot = element_integer(r, 8, kScripts);
  return raw;
}

Decision to_decision(const Raw& raw) {
  return {raw.allowed, raw.limit, raw.remaining, raw.allowed ? 0 : ceil_ms(raw.retry_after_us),
          ceil_ms(raw.reset_after_us)};
}

bool cancel(Connection& conn, const Keys& keys, std::string_view key, const Params& p,
            const Raw& reservation, std::string_view member) {
  check_name("limit", key);
  Args args{std::string(algo_name(p.algo)),   std::to_string(reservation.due_us),
            std::to_string(p.unit),           std::to_string(p.drain),
            std::to_string(p.burst),          std::to_string(p.cost),
            std::to_string(reservation.slot), std::string(member.empty() ? "-" : member)};
  Reply r = eval(conn, lua::kLimitCancel, key_names(keys, key), args);
  return reply_integer(r.get()) == 1;
}

Decision check(Connection& conn, const Keys& keys, std::string_view key, const Params& p) {
  return to_decision(evaluate(conn, keys, key, p, -1, false, random_token()));
}

Decision status(Connection& conn, const Keys& keys, std::string_view key, const Params& p) {
  return to_decision(evaluate(conn, keys, key, p, -1, true, {}));
}

Waited wait(Connection& conn, const Keys& keys, std::string_view key, const Params& p,
            Millis max_wait) {
  std::int64_t max_wait_us =
      max_wait == Millis::max() ? kForeverUs : std::min(kForeverUs, max_wait.count() * 1000);
  std::string member = random_token();
  auto start = Clock::now();
  Raw raw;
  {
    // The reservation is one round trip: let it finish, so we know what to give back.
    signals::Uninterruptible quiet;
    raw = evaluate(conn, keys, key, p, max_wait_us, false, member);
  }
  // Sleep from the reply on: the server decided before it answered, so we are never early.
  auto replied = Clock::now();
  if (raw.allowed && raw.wait_us > 0 &&
      !signals::sleep_until(replied + std::chrono::microseconds(raw.wait_us))) {
    signals::Uninterruptible quiet;
    bool given_back = false;
    try {
      given_back = cancel(conn, keys, key, p, raw, member);
    } catch (const Error&) {
      // Unreachable now: the reservation stays counted, as if the request had been made.
    }
    throw Error(kInterrupted, fmt::format("interrupted while waiting for limit '{}'", key),
                given_back ? "the reserved slot was given back"
                           : "the reserved slot could not be given back and stays counted");
  }
  Waited w;
  w.decision = to_decision(raw);
  w.waited_ms = std::chrono::duration_cast<Millis>(Clock::now() - start).count();
  return w;
}

bool reset(Connection& conn, const Keys& keys, std::string_view key) {
  check_name("limit", key);
  // Whatever rates it was last checked with: the keys of every possible one.
  Args names;
  for (std::size_t i = 0; i < kMaxRates; ++i) {
    auto [state, log] = rate_keys(keys, key, i);
    names.push_back(std::move(state));
    names.push_back(std::move(log));
  }
  Reply r = eval(conn, lua::kLimitReset, names, {});
  return reply_integer(r.get()) > 0;
}

// --- several rates ---------------------------------------------------------------------------

std::pair<std::string, std::string> rate_keys(const Keys& keys, std::string_view key,
                                              std::size_t position) {
  if (position == 0) return {keys.object(kType, key), keys.aux(kType, key, "log")};
  std::string suffix = fmt::format("rate{}", position + 1);
  return {keys.aux(kType, key, suffix), keys.aux(kType, key, suffix + ":log")};
}

std::vector<Raw> decode_multi(const redisReply* r, std::size_t rates) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 + 9 * rates) {
    throw Error(kServer, "unexpected reply from the limit script");
  }
  std::vector<Raw> out(rates);
  for (std::size_t i = 0; i < rates; ++i) {
    std::size_t base = 1 + 9 * i;
    Raw& raw = out[i];
    raw.allowed = element_integer(r, base, kScripts) == 1;
    raw.limit = element_integer(r, base + 1, kScripts);
    raw.remaining = element_integer(r, base + 2, kScripts);
    raw.retry_after_us = element_integer(r, base + 3, kScripts);
    raw.reset_after_us = element_integer(r, base + 4, kScripts);
    raw.wait_us = element_integer(r, base + 5, kScripts);
    raw.now_us = element_integer(r, base + 6, kScripts);
    raw.due_us = element_integer(r, base + 7, kScripts);
    raw.slot = element_integer(r, base + 8, kScripts);
  }
  return out;
}

namespace {

// The rates' positions in the key layout: sorted by period, then count.
std::vector<std::size_t> key_positions(const std::vector<Params>& rates) {
  std::vector<std::size_t> order(rates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Rate& x = rates[a].rate;
    const Rate& y = rates[b].rate;
    return x.period != y.period ? x.period < y.period : x.count < y.count;
  });
  std::vector<std::size_t> position(rates.size());
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  return position;
}

// The whole answer from the rates' answers (see MultiDecision).
Decision combine(const std::vector<Rated>& rates) {
  Decision all{true, 0, 0, 0, 0};
  const Rated* binding = nullptr;
  bool first = true;
  for (const auto& r : rates) {
    const Decision& d = r.decision;
    all.allowed = all.allowed && d.allowed;
    all.remaining = first ? d.remaining : std::min(all.remaining, d.remaining);
    all.reset_after_ms = std::max(all.reset_after_ms, d.reset_after_ms);
    first = false;
  }
  for (const auto& r : rates) {
    const Decision& d = r.decision;
    if (all.allowed) {
      if (!binding || d.remaining < binding->decision.remaining) binding = &r;
      continue;
    }
    if (d.allowed) continue;
    if (all.retry_after_ms >= 0 &&
        (d.retry_after_ms < 0 || d.retry_after_ms > all.retry_after_ms)) {
      all.retry_after_ms = d.retry_after_ms;
      binding = &r;
    } else if (!binding) {
      binding = &r;
    }
  }
  if (binding) all.limit = binding->decision.limit;
  return all;
}

MultiDecision decide(Connection& conn, const Keys& keys, std::string_view key,
                     const std::vector<Params>& rates, bool peek) {
  auto raws = evaluate(conn, keys, key, rates, peek);
  MultiDecision out;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    out.rates.push_back({rates[i].rate, to_decision(raws[i])});
  }
  out.decision = combine(out.rates);
  return out;
}

}  // namespace

std::vector<Raw> evaluate(Connection& conn, const Keys& keys, std::string_view key,
                          const std::vector<Params>& rates, bool peek) {
  check_name("limit", key);
  if (rates.empty() || rates.size() > kMaxRates) {
    throw Error(kUsage, fmt::format("a limit takes 1 to {} rates", kMaxRates));
  }
  auto position = key_positions(rates);
  // The script's arguments go in key order, so each rate's state is found under its keys.
  std::vector<std::size_t> by_position(rates.size());
  for (std::size_t i = 0; i < rates.size(); ++i) by_position[position[i]] = i;
  Args names;
  Args args{std::string(algo_name(rates.front().algo)), std::to_string(rates.front().cost),
            peek ? "1" : "0", peek ? std::string("-") : random_token()};
  for (std::size_t pos = 0; pos < rates.size(); ++pos) {
    const Params& p = rates[by_position[pos]];
    auto [state, log] = rate_keys(keys, key, pos);
    names.push_back(std::move(state));
    names.push_back(std::move(log));
    args.push_back(std::to_string(p.unit));
    args.push_back(std::to_string(p.drain));
    args.push_back(std::to_string(p.burst));
    args.push_back(std::to_string(p.window_us));
  }
  std::optional<ReplicaWaitSuspended> no_wait;
  if (peek) no_wait.emplace(conn);
  Reply r = eval(conn, lua::kLimitMulti, names, args);
  auto raws = decode_multi(r.get(), rates.size());
  std::vector<Raw> out;
  for (std::size_t i = 0; i < rates.size(); ++i) out.push_back(raws[position[i]]);
  return out;
}

MultiDecision check(Connection& conn, const Keys& keys, std::string_view key,
                    const std::vector<Params>& rates) {
  return decide(conn, keys, key, rates, false);
}

MultiDecision status(Connection& conn, const Keys& keys, std::string_view key,
                     const std::vector<Params>& rates) {
  return decide(conn, keys, key, rates, true);
}

MultiWaited wait(Connection& conn, const Keys& keys, std::string_view key,
                 const std::vector<Params>& rates, Millis max_wait) {
  auto start = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (max_wait != Millis::max()) deadline = start + max_wait;
  for (;;) {
    MultiDecision d;
    {
      signals::Uninterruptible quiet;  // one round trip: let it finish, so we know the answer
      d = check(conn, keys, key, rates);
    }
    auto replied = Clock::now();
    if (d.decision.allowed || d.decision.retry_after_ms < 0) {
      return {d, std::chrono::duration_cast<Millis>(replied - start).count()};
    }
    // From the reply on: the server decided before it answered, so we are never early.
    auto next = replied + Millis(d.decision.retry_after_ms);
    if (deadline && next > *deadline) {
      return {d, std::chrono::duration_cast<Millis>(replied - start).count()};
    }
    if (!signals::sleep_until(next)) {
      throw Error(kInterrupted, fmt::format("interrupted while waiting for limit '{}'", key),
                  "nothing was consumed");
    }
  }
}

}  // namespace rcoord::limit
