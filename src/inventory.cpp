#include "inventory.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

#include "bloom.hpp"
#include "cluster.hpp"
#include "elect.hpp"
#include "errors.hpp"
#include "latch.hpp"
#include "limit.hpp"
#include "lock.hpp"
#include "pf.hpp"
#include "queue.hpp"
#include "remove.hpp"
#include "semaphore.hpp"
#include "text.hpp"

namespace rcoord::inventory {
namespace {

std::string glob_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string seconds(std::int64_t ms) {
  return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000);
}

std::string short_token(const std::string& token) {
  return token.size() > 8 ? token.substr(0, 8) + "…" : token;
}

// A stored decimal number; 0 for a missing, malformed or negative one.
std::int64_t positive_or_zero(std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < 0) return 0;
  return v;
}

std::int64_t integer_of(Connection& conn, const Args& command) {
  return reply_integer(conn.command(command).get());
}

std::string lock_state(Connection& conn, const Keys& keys, const std::string& name) {
  auto s = lock::status(conn, keys, name);
  if (s.mode == "exclusive") {
    return fmt::format("held by {} for {}, fence {}", short_token(s.token), seconds(s.ttl_ms),
                       s.fence);
  }
  if (s.mode == "shared") {
    return fmt::format("shared by {} reader(s) for up to {}, fence {}", s.readers,
                       seconds(s.ttl_ms), s.fence);
  }
  return fmt::format("free, last fence {}", s.fence);
}

std::string sem_state(Connection& conn, const Keys& keys, const std::string& name) {
  auto s = semaphore::status(conn, keys, name);
  return fmt::format("{} of {} permit(s) in use by {} holder(s), {} waiting", s.in_use, s.limit,
                     s.holders.size(), s.waiting);
}

// The decision parameters last used on a limit, from the HMGET of its algo, unit, drain,
// burst and window. State written by earlier versions has no burst: nullopt.
std::optional<limit::Params> stored_params(const redisReply* fields) {
  auto field = [&](std::size_t i) { return reply_string(fields->element[i]); };
  auto algo = limit::parse_algo(field(0));
  auto number = [&](std::size_t i) { return positive_or_zero(field(i)); };
  if (!algo || number(3) < 1) return std::nullopt;
  limit::Params p;
  p.algo = *algo;
  p.burst = number(3);
  p.cost = 1;
  p.unit = number(1);
  p.drain = number(2);
  p.window_us = number(4);
  bool complete = (*algo == limit::Algo::kGcra || *algo == limit::Algo::kTokenBucket)
                      ? p.unit > 0 && p.drain > 0
                      : p.window_us > 0;
  if (!complete) return std::nullopt;
  return p;
}

std::string limit_state(Connection& conn, const Keys& keys, const std::string& name) {
  std::string key = keys.object("limit", name);
  Reply fields = conn.command({"HMGET", key, "algo", "unit", "drain", "burst", "window"});
  if (fields->type != REDIS_REPLY_ARRAY || fields->elements != 5) {
    throw Error(kServer, "unexpected reply to HMGET");
  }
  std::string algo = reply_string(fields->element[0]);
  if (algo.empty()) return "no state (idle)";
  if (auto params = stored_params(fields.get())) {
    auto now = limit::evaluate(conn, keys, name, *params, -1, /*peek=*/true, "ls");
    return fmt::format("{}, {} of {} left, full again in {}", algo, now.remaining, now.limit,
                       seconds(limit::ceil_ms(now.reset_after_us)));
  }
  std::int64_t ttl = integer_of(conn, {"PTTL", key});
  return fmt::format("{}, back to full in at most {}", algo,
                     seconds(std::max<std::int64_t>(0, ttl)));
}

std::string bloom_state(Connection& conn, const Keys& keys, const std::string& name) {
  auto i = bloom::info(conn, keys, name);
  if (!i.exists) return "no filter";
  return fmt::format("{} item(s), {} layer(s), capacity {}, {:.1f}% of bits set", i.items, i.layers,
                     i.capacity, i.fill_ratio * 100);
}

std::string elect_state(Connection& conn, const Keys& keys, const std::string& name) {
  auto s = elect::status(conn, keys, name);
  if (!s.leader) return fmt::format("no leader, last term {}", s.term);
  return fmt::format("led by {}, term {}, {} left", s.id, s.term, seconds(s.ttl_ms));
}

std::string queue_state(Connection& conn, const Keys& keys, const std::string& name) {
  auto s = queue::stats(conn, keys, name);
  return fmt::format("ready {}, delayed {}, in flight {}, dead {}", s.ready, s.delayed, s.in_flight,
                     s.dead);
}

std::string latch_state(Connection& conn, const Keys& keys, const std::string& name) {
  auto s = latch::status(conn, keys, name);
  if (!s.found) return "gone";
  return s.count == 0 ? "open (count 0)" : fmt::format("count {}", s.count);
}

std::string state_of(Connection& conn, const Keys& keys, const std::string& type,
                     const std::string& name) {
  if (type == "lock") return lock_state(conn, keys, name);
  if (type == "sem") return sem_state(conn, keys, name);
  if (type == "limit") return limit_state(conn, keys, name);
  if (type == "bloom") return bloom_state(conn, keys, name);
  if (type == "pf") return fmt::format("~{} distinct", pf::count(conn, keys, {name}).count);
  if (type == "complete") {
    return fmt::format("{} term(s)", integer_of(conn, {"ZCARD", keys.object(type, name)}));
  }
  if (type == "recent") {
    return fmt::format("{} item(s)", integer_of(conn, {"LLEN", keys.object(type, name)}));
  }
  if (type == "elect") return elect_state(conn, keys, name);
  if (type == "queue") return queue_state(conn, keys, name);
  if (type == "signal") {
    return fmt::format("{} waiter(s) registered",
                       integer_of(conn, {"ZCARD", keys.object(type, name)}));
  }
  if (type == "latch") return latch_state(conn, keys, name);
  return "unknown";
}

// The objects whose writes take --expire: their main key's PTTL is when the object ends.
bool may_expire(const std::string& type) {
  return type == "bloom" || type == "pf" || type == "complete" || type == "recent";
}

// Milliseconds until the object ends, -1 when it does not (or is gone).
std::int64_t expires_in_ms(Connection& conn, const Keys& keys, const std::string& type,
                           const std::string& name) {
  if (!may_expire(type)) return -1;
  Reply r = conn.command_raw({"PTTL", keys.object(type, name)});
  if (r->type != REDIS_REPLY_INTEGER || r->integer < 0) return -1;
  return r->integer;
}

// `<prefix>{type:name}` or `<prefix>{type:name}:suffix` -> type and name; false otherwise.
bool parse_key(const std::string& key, const std::string& prefix, std::string& type,
               std::string& name) {
  if (key.compare(0, prefix.size(), prefix) != 0 || key.size() < prefix.size() + 4) return false;
  std::size_t open = prefix.size();
  if (key[open] != '{') return false;
  std::size_t colon = key.find(':', open);
  if (colon == std::string::npos) return false;
  // The main key ends with '}'; an auxiliary key has "}:" after the name.
  std::size_t close = key.back() == '}' ? key.size() - 1 : key.rfind("}:");
  if (close == std::string::npos || close <= colon) return false;
  type = key.substr(open + 1, colon - open - 1);
  name = key.substr(colon + 1, close - colon - 1);
  return true;
}

}  // namespace

const std::vector<std::string>& types() {
  static const std::vector<std::string> kTypes = {"lock",  "sem",      "limit",  "bloom",
                                                  "pf",    "complete", "recent", "elect",
                                                  "queue", "signal",   "latch"};
  return kTypes;
}

namespace {

// One SCAN walk over the keys of the node `conn` is on; the state of each object is read on
// that node too (its keys are there). SCAN's MATCH only narrows the walk: its `*` for the
// type can swallow part of a name (`{*:fence}` matches the lock `a:fence`), so each name
// found is matched against `pattern` again, whole.
void scan_node(Connection& conn, const Keys& keys, const std::string& match,
               std::string_view pattern, std::set<std::string>& seen, std::size_t& found,
               const std::function<void(const Object&)>& each) {
  std::string cursor = "0";
  do {
    Reply r = conn.command({"SCAN", cursor, "MATCH", match, "COUNT", "1000"});
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
      throw Error(kServer, "unexpected reply to SCAN");
    }
    cursor = reply_string(r->element[0]);
    const redisReply* batch = r->element[1];
    for (std::size_t i = 0; i < batch->elements; ++i) {
      std::string key = reply_string(batch->element[i]);
      Object object;
      if (!parse_key(key, keys.prefix(), object.type, object.name)) continue;
      if (std::find(types().begin(), types().end(), object.type) == types().end()) continue;
      if (!glob_match(pattern, object.name)) continue;
      if (!seen.insert(object.type + '\0' + object.name).second) continue;
      try {
        // A lock, election or queue that rm removed (or that ended) keeps only its counter,
        // so fences, terms and ids never repeat: that is not an object to list.
        if (removal::only_counters_left(conn, keys, object.type, object.name)) continue;
        object.state = state_of(conn, keys, object.type, object.name);
        object.expires_in_ms = expires_in_ms(conn, keys, object.type, object.name);
        if (object.expires_in_ms >= 0) {
          object.state += fmt::format(", expires in {}", seconds(object.expires_in_ms));
        }
      } catch (const Error& e) {
        if (e.code() != kServer) throw;
        object.state = fmt::format("unreadable: {}", e.what());
      }
      ++found;
      each(object);
    }
  } while (cursor != "0");
}

}  // namespace

std::size_t list(Connection& conn, const Keys& keys, std::string_view pattern,
                 std::string_view type, const std::function<void(const Object&)>& each) {
  if (!type.empty() && std::find(types().begin(), types().end(), type) == types().end()) {
    throw Error(kUsage, fmt::format("unknown --type '{}'", type),
                "use lock, sem, limit, bloom, pf, complete, recent, elect, queue, signal or latch");
  }
  if (pattern.empty()) pattern = "*";
  std::string match = glob_escape(keys.prefix()) + "{" +
                      (type.empty() ? std::string("*") : std::string(type)) + ":" +
                      std::string(pattern) + "}*";
  std::set<std::string> seen;  // an object has several keys: report it once
  std::size_t found = 0;
  auto masters = cluster::masters(conn);
  if (!masters) {
    scan_node(conn, keys, match, pattern, seen, found, each);
    return found;
  }
  // A cluster: each master holds the keys of its own slots, so every one is walked (an
  // object in a slot being migrated may show up on both nodes: `seen` reports it once). A
  // master that cannot be reached does not hide the others' objects; it fails the listing
  // once they are shown.
  std::vector<std::string> unreachable;
  for (const auto& endpoint : *masters) {
    try {
      Connection node(endpoint, conn.timeout());
      scan_node(node, keys, match, pattern, seen, found, each);
    } catch (const Error& e) {
      if (e.code() != kConnection) throw;
      unreachable.emplace_back(e.what());
    }
  }
  if (!unreachable.empty()) {
    throw Error(kConnection,
                fmt::format("{} of {} cluster masters were not listed: {}", unreachable.size(),
                            masters->size(), fmt::join(unreachable, "; ")),
                "the objects of the other masters are listed above; check the cluster with "
                "rcoord doctor");
  }
  return found;
}

}  // namespace rcoord::inventory
