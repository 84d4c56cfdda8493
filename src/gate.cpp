#include "gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <tuple>

#include "errors.hpp"
#include "gate_parts.hpp"
#include "limit.hpp"
#include "lock.hpp"
#include "lua_scripts.hpp"
#include "reply.hpp"
#include "script.hpp"
#include "semaphore.hpp"

namespace rcoord::gate {
namespace {

using GateClock = std::chrono::steady_clock;
constexpr std::string_view kGateType = "gate";
// Separates the fields of a part in the record; the name comes last, so it may hold anything.
constexpr char kGateSep = '\x1f';

std::string gate_record_key(const Keys& keys, std::string_view token) {
  return keys.object(kGateType, token);
}

std::string encode_gate_part(const Part& p) {
  return fmt::format("{}{}{}{}{}{}{}{}{}", kind_name(p.kind), kGateSep, p.limit, kGateSep,
                     p.permits, kGateSep, p.rate_text, kGateSep, p.name);
}

std::optional<Part> decode_gate_part(std::string_view text) {
  std::vector<std::string_view> fields;
  for (int i = 0; i < 4; ++i) {
    auto at = text.find(kGateSep);
    if (at == std::string_view::npos) return std::nullopt;
    fields.push_back(text.substr(0, at));
    text.remove_prefix(at + 1);
  }
  Part p;
  p.name = std::string(text);
  if (fields[0] == "lock") {
    p.kind = Kind::kLock;
  } else if (fields[0] == "shared-lock") {
    p.kind = Kind::kSharedLock;
  } else if (fields[0] == "sem") {
    p.kind = Kind::kSem;
  } else if (fields[0] == "rate") {
    p.kind = Kind::kRate;
  } else {
    return std::nullopt;
  }
  auto limit = parse_decimal(fields[1]);
  auto permits = parse_decimal(fields[2]);
  if (!limit || !permits) return std::nullopt;
  p.limit = *limit;
  p.permits = *permits;
  p.rate_text = std::string(fields[3]);
  if (p.kind == Kind::kRate) {
    auto rate = rcoord::parse_rate(p.rate_text);
    if (!rate) return std::nullopt;
    p.rate = *rate;
  }
  return p;
}

}  // namespace

limit::Params rate_params(const Part& part) {
  return limit::make_params(limit::Algo::kGcra, part.rate, std::nullopt, 1);
}

// Gives back (or withdraws from the waiters of) one lock or semaphore part; rates: nothing.
bool give_back_part(Connection& conn, const Keys& keys, const Part& part, std::string_view token,
                    const Ending& ending) {
  switch (part.kind) {
    case Kind::kLock:
    case Kind::kSharedLock:
      return lock::release(conn, keys, part.name, token, ending);
    case Kind::kSem:
      return semaphore::release(conn, keys, part.name, token, ending);
    case Kind::kRate:
      return true;
  }
  return false;
}

// gate_record's ARGV: the TTL, then `n` and each part.
Args record_args(const std::vector<Part>& parts, Millis ttl) {
  Args args{std::to_string(ttl.count()), "n", std::to_string(parts.size())};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    args.push_back(std::to_string(i + 1));
    args.push_back(encode_gate_part(parts[i]));
  }
  return args;
}

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::kLock:
      return "lock";
    case Kind::kSharedLock:
      return "shared-lock";
    case Kind::kSem:
      return "sem";
    case Kind::kRate:
      return "rate";
  }
  return "?";
}

Part parse_sem(std::string_view text) {
  const std::string hint = "give --sem NAME:LIMIT[:PERMITS], e.g. --sem encoders:4:2";
  auto first = text.rfind(':');
  if (first == std::string_view::npos) {
    throw Error(kUsage, fmt::format("bad --sem '{}': no limit", text), hint);
  }
  // NAME:LIMIT:PERMITS when the last two fields are numbers, else NAME:LIMIT.
  Part p;
  p.kind = Kind::kSem;
  std::string_view last = text.substr(first + 1);
  std::string_view head = text.substr(0, first);
  auto second = head.rfind(':');
  auto last_n = parse_decimal(last);
  std::optional<std::int64_t> middle_n;
  if (second != std::string_view::npos) middle_n = parse_decimal(head.substr(second + 1));
  if (!last_n) throw Error(kUsage, fmt::format("bad --sem '{}': not a number", text), hint);
  if (middle_n) {
    p.name = std::string(head.substr(0, second));
    p.limit = *middle_n;
    p.permits = *last_n;
  } else {
    p.name = std::string(head);
    p.limit = *last_n;
  }
  if (p.name.empty()) throw Error(kUsage, fmt::format("bad --sem '{}': empty name", text), hint);
  if (p.limit < 1 || p.limit > 1'000'000'000) {
    throw Error(kUsage, fmt::format("bad --sem '{}': the limit must be 1 to 1000000000", text),
                hint);
  }
  if (p.permits < 1 || p.permits > p.limit) {
    throw Error(kUsage, fmt::format("bad --sem '{}': permits must be 1 to the limit", text), hint);
  }
  return p;
}

Part parse_rate(std::string_view text) {
  const std::string hint = "give --rate NAME:N/PERIOD, e.g. --rate api:10/s";
  auto at = text.rfind(':');
  if (at == std::string_view::npos || at == 0) {
    throw Error(kUsage, fmt::format("bad --rate '{}': expected NAME:RATE", text), hint);
  }
  Part p;
  p.kind = Kind::kRate;
  p.name = std::string(text.substr(0, at));
  p.rate_text = std::string(text.substr(at + 1));
  auto rate = rcoord::parse_rate(p.rate_text);
  if (!rate || rate->count < 1) {
    throw Error(kUsage, fmt::format("bad --rate '{}': bad rate '{}'", text, p.rate_text), hint);
  }
  p.rate = *rate;
  rate_params(p);  // throws Error(kUsage) for a rate the limit scripts cannot take
  return p;
}

void order(std::vector<Part>& parts) {
  if (parts.empty()) {
    throw Error(kUsage, "a gate needs at least one part",
                "give --lock, --shared-lock, --sem or --rate");
  }
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return std::tie(a.kind, a.name) < std::tie(b.kind, b.name);
  });
  // A lock and a shared lock of one name are the same object: checked by object type.
  auto object_of = [](const Part& p) {
    std::string_view type = p.kind == Kind::kSem ? "sem" : p.kind == Kind::kRate ? "rate" : "lock";
    return std::pair<std::string_view, std::string_view>(type, p.name);
  };
  for (std::size_t i = 0; i < parts.size(); ++i) {
    check_name(kind_name(parts[i].kind), parts[i].name);
    for (std::size_t j = 0; j < i; ++j) {
      if (object_of(parts[i]) == object_of(parts[j])) {
        throw Error(kUsage,
                    fmt::format("{} '{}' is named twice", object_of(parts[i]).first, parts[i].name),
                    "name each lock, semaphore and rate once");
      }
    }
  }
}

void give_back_all(Connection& conn, const Keys& keys, const std::vector<Part>& parts,
                   std::string_view token, const Ending& ending) {
  for (std::size_t i = parts.size(); i-- > 0;) {
    give_back_part(conn, keys, parts[i], token, ending);
  }
  conn.command({"DEL", gate_record_key(keys, token)});
}

std::optional<std::vector<Part>> recorded_parts(Connection& conn, const Keys& keys,
                                                std::string_view token) {
  std::string key = gate_record_key(keys, token);
  Reply r = conn.command({"HGETALL", key});
  return decode_record(r.get(), key);
}

std::string record_key(const Keys& keys, std::string_view token) {
  return gate_record_key(keys, token);
}

std::string counters_name(const std::vector<Part>& ordered) {
  std::string out;
  for (const auto& p : ordered) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}:{}", kind_name(p.kind), p.name);
  }
  return out;
}

std::string counters_key(const Keys& keys, const std::vector<Part>& ordered) {
  return keys.aux(kGateType, counters_name(ordered), "stats");
}

std::int64_t count_take(Connection& conn, const Keys& keys, const std::vector<Part>& ordered,
                        std::string_view outcome, std::int64_t busy_since) {
  Reply r = eval(conn, lua::kGateCount, {counters_key(keys, ordered)},
                 {std::string(outcome), busy_since > 0 ? std::to_string(busy_since) : ""});
  return reply_integer(r.get());
}

std::string describe(const Part& part) {
  switch (part.kind) {
    case Kind::kSem:
      return fmt::format("sem {}:{}:{}", part.name, part.limit, part.permits);
    case Kind::kRate:
      return fmt::format("rate {}:{}", part.name, part.rate_text);
    default:
      return fmt::format("{} {}", kind_name(part.kind), part.name);
  }
}

std::optional<std::vector<Part>> decode_record(const redisReply* reply, std::string_view key) {
  if (reply->type != REDIS_REPLY_ARRAY) {
    throw Error(kServer, "unexpected reply to HGETALL of a gate record");
  }
  if (reply->elements == 0) return std::nullopt;
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < reply->elements; i += 2) {
    fields[reply_string(reply->element[i])] = reply_string(reply->element[i + 1]);
  }
  auto bad = [&] {
    return Error(kServer, fmt::format("the gate record {} is malformed", key),
                 "delete it, or use another --prefix");
  };
  auto n = parse_decimal(fields["n"]);
  if (!n) throw bad();
  std::vector<Part> parts;
  for (std::int64_t i = 1; i <= *n; ++i) {
    auto p = decode_gate_part(fields[std::to_string(i)]);
    if (!p) throw bad();
    parts.push_back(std::move(*p));
  }
  return parts;
}

Released release(Connection& conn, const Keys& keys, std::string_view token) {
  Released out;
  out.token = std::string(token);
  auto parts = recorded_parts(conn, keys, token);
  if (!parts) return out;
  out.released = true;
  for (const auto& p : *parts) out.parts.push_back({p, true, 0});
  for (std::size_t i = out.parts.size(); i-- > 0;) {
    PartState& p = out.parts[i];
    if (p.part.kind == Kind::kRate) continue;
    p.held = give_back_part(conn, keys, p.part, token, {});
    out.released = out.released && p.held;
  }
  conn.command({"DEL", gate_record_key(keys, token)});
  return out;
}

Extended extend(Connection& conn, const Keys& keys, std::string_view token, Millis ttl) {
  Extended out;
  out.token = std::string(token);
  auto parts = recorded_parts(conn, keys, token);
  if (!parts) return out;
  out.extended = true;
  for (const auto& p : *parts) {
    PartState s{p, true, 0};
    if (p.kind == Kind::kSem) {
      s.held = semaphore::refresh(conn, keys, p.name, token, ttl);
    } else if (p.kind != Kind::kRate) {
      auto e = lock::extend(conn, keys, p.name, token, ttl);
      s.held = e.extended;
      s.fence = e.fence;
    }
    out.extended = out.extended && s.held;
    out.parts.push_back(std::move(s));
  }
  conn.command({"PEXPIRE", gate_record_key(keys, token), std::to_string(ttl.count())});
  if (out.extended) out.ttl_ms = ttl.count();
  return out;
}

Status status(Connection& conn, const Keys& keys, std::string_view token) {
  Status out;
  out.token = std::string(token);
  auto parts = recorded_parts(conn, keys, token);
  if (!parts) return out;
  out.held = true;
  Reply ttl = conn.command({"PTTL", gate_record_key(keys, token)});
  out.ttl_ms = std::max<std::int64_t>(0, reply_integer(ttl.get()));
  for (const auto& p : *parts) {
    PartState s{p, true, 0};
    if (p.kind == Kind::kSem) {
      auto st = semaphore::status(conn, keys, p.name);
      s.held = std::any_of(st.holders.begin(), st.holders.end(),
                           [&](const semaphore::Holder& h) { return h.token == token; });
    } else if (p.kind != Kind::kRate) {
      auto st = lock::status(conn, keys, p.name);
      if (st.token == token) {
        s.fence = st.fence;
      } else {
        s.held = std::any_of(st.reader_list.begin(), st.reader_list.end(),
                             [&](const lock::Reader& r) { return r.token == token; });
      }
    }
    out.held = out.held && s.held;
    out.parts.push_back(std::move(s));
  }
  return out;
}

namespace {

// A part of a running gate was lost: counted in the gate's counters, as far as the server
// answers before `deadline` (the loss is what matters now, not its count).
void count_lost(Connection& conn, const Keys& keys, const std::vector<Part>& ordered,
                Lease::Clock::time_point deadline) {
  try {
    DeadlineCap bounded(conn, deadline);
    count_take(conn, keys, ordered, "lost", 0);
  } catch (const Error&) {
    // The part's own counters have the loss already; the gate's miss it.
  }
}

}  // namespace

Lease lease(Connection& conn, const Keys& keys, const Taken& taken, Millis ttl) {
  auto subs = std::make_shared<std::vector<Lease>>();
  auto taken_at = GateClock::time_point::max();
  for (const auto& p : taken.parts) {
    taken_at = std::min(taken_at, p.sent);
    if (p.part.kind == Kind::kSem) {
      semaphore::Taken t;
      t.acquired = true;
      t.name = p.part.name;
      t.token = taken.token;
      t.sent = p.sent;
      t.who = taken.who;
      t.waited_ms = taken.waited_ms;
      subs->push_back(semaphore::lease(conn, keys, t, ttl));
    } else if (p.part.kind != Kind::kRate) {
      lock::Acquired a;
      a.acquired = true;
      a.name = p.part.name;
      a.token = taken.token;
      a.sent = p.sent;
      a.who = taken.who;
      a.waited_ms = taken.waited_ms;
      subs->push_back(lock::lease(conn, keys, a, ttl));
    }
  }
  if (taken_at == GateClock::time_point::max()) taken_at = GateClock::now();
  std::string record = gate_record_key(keys, taken.token);
  std::vector<Part> ordered;
  for (const auto& p : taken.parts) ordered.push_back(p.part);
  Lease held{ttl, taken_at, nullptr, nullptr, nullptr, {}};
  held.renew = [subs, &conn, &keys, record, ordered, ttl](Lease::Clock::time_point deadline) {
    for (auto& part : *subs) {
      if (!part.renew(deadline)) {  // one part lost: the gate is lost
        count_lost(conn, keys, ordered, deadline);
        return false;
      }
    }
    DeadlineCap bounded(conn, deadline);
    conn.command({"PEXPIRE", record, std::to_string(ttl.count())});
    return true;
  };
  held.give_back = [subs, &conn, record](const Ending& ending, Lease::Clock::time_point deadline) {
    bool woke = false;
    // Every part is given back even if one fails; the first failure goes on afterwards.
    std::exception_ptr first_error;
    for (std::size_t i = subs->size(); i-- > 0;) {
      try {
        woke = (*subs)[i].give_back(ending, deadline) || woke;
      } catch (const Error&) {
        if (!first_error) first_error = std::current_exception();
      }
    }
    {
      ReplicaWaitSuspended no_wait(conn);
      DeadlineCap bounded(conn, deadline);
      conn.command({"DEL", record});
    }
    if (first_error) std::rethrow_exception(first_error);
    return woke;
  };
  // One watch over the union of the parts' keys, on the connection that renews them all.
  WatchedKeys all{&conn, {}};
  for (const auto& part : *subs) {
    for (const auto& w : part.watched)
      all.keys.insert(all.keys.end(), w.keys.begin(), w.keys.end());
  }
  if (!all.keys.empty()) held.watched.push_back(std::move(all));
  return held;
}

}  // namespace rcoord::gate
