#include "inventory.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <span>
#include <unordered_set>

#include "bloom.hpp"
#include "cluster.hpp"
#include "elect.hpp"
#include "errors.hpp"
#include "identity.hpp"
#include "latch.hpp"
#include "limit.hpp"
#include "lock.hpp"
#include "queue.hpp"
#include "redirect.hpp"
#include "remove.hpp"
#include "script.hpp"
#include "semaphore.hpp"
#include "text.hpp"

namespace rcoord::inventory {
namespace {

// Objects whose states one pipeline reads. A few hundred keep each pipeline short for the
// server (it runs one client's pipelined commands back to back) and memory flat here.
constexpr std::size_t kBatch = 256;

std::string glob_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string short_token(const std::string& token) {
  return token.size() > 8 ? token.substr(0, 8) + "…" : token;
}

double as_double(std::int64_t v) { return static_cast<double>(v); }

// Reading one object's state: the calls of its next round, and what makes sense of their
// replies. A decoder may ask for one more round (a limit's peek needs the parameters its
// state keeps, a Bloom filter's fill its number of layers).
struct Probe {
  Object object;
  std::vector<Call> calls;
  std::function<void(Probe&, std::span<const Reply>)> decode;
  bool dropped = false;  // not an object to report (rm left only its counter)
};

Call plain(Args args) { return {std::move(args), nullptr}; }

void next_round(Probe& p, std::vector<Call> calls,
                std::function<void(Probe&, std::span<const Reply>)> decode) {
  p.calls = std::move(calls);
  p.decode = std::move(decode);
}

// --- what each type's state says ------------------------------------------------------------

// `backup@web-3` of a holder whose take recorded who it was, else the token's start.
std::string holder_name(const Holder& h, const std::string& token) {
  if (!h.known()) return short_token(token);
  return h.who.user + "@" + h.who.host;
}

// `held by backup@web-3 (pid 4242, backup.sh) for 14m30s, expires in 19.4s` (SPEC §5), or
// as much of it as the take recorded.
std::string held_by(const Holder& h, const std::string& token, std::int64_t ttl_ms) {
  std::string who = h.known() ? describe(h.who) : short_token(token);
  std::string out = "held by " + who;
  if (h.held_ms >= 0) out += " for " + format_elapsed(Millis(h.held_ms));
  return out + ", expires in " + format_elapsed(Millis(ttl_ms));
}

// `; kept: its command ended 5m ago (exit 0)`: a `lock run --min-hold` whose holder is gone.
std::string kept_since(const lock::Kept& k) {
  std::string out = "; kept: its command ended";
  if (k.ended_ms >= 0) out += " " + format_elapsed(Millis(k.ended_ms)) + " ago";
  if (k.exit_code) out += fmt::format(" (exit {})", *k.exit_code);
  return out;
}

// `; 2 kept after their command ended` of a shared lock's listed readers, or nothing.
std::string readers_kept(const lock::Status& s) {
  auto kept = std::count_if(s.reader_list.begin(), s.reader_list.end(),
                            [](const lock::Reader& r) { return r.kept.kept(); });
  if (kept == 0) return {};
  return fmt::format("; {} kept after {} command ended", kept, kept == 1 ? "its" : "their");
}

void show_lock(Object& o, const lock::Status& s) {
  if (s.mode == "exclusive") {
    o.state = fmt::format("{}, fence {}", held_by(s.holder, s.token, s.ttl_ms), s.fence);
    if (s.kept.kept()) o.state += kept_since(s.kept);
    o.holder = holder_name(s.holder, s.token);
    o.ttl_ms = s.ttl_ms;
    o.age_ms = s.held_ms;
    o.fingerprint = fmt::format("held {} {}", s.token, s.fence);
  } else if (s.mode == "shared") {
    o.state = fmt::format("shared by {} reader(s) for up to {}, fence {}{}", s.readers,
                          format_elapsed(Millis(s.ttl_ms)), s.fence, readers_kept(s));
    o.holder = fmt::format("{} reader(s)", s.readers);
    o.ttl_ms = s.ttl_ms;
    o.fingerprint = fmt::format("shared {} {}", s.readers, s.fence);
  } else {
    o.state = fmt::format("free, last fence {}", s.fence);
    o.fingerprint = fmt::format("free {}", s.fence);
  }
  o.waiting = s.waiting;
  o.fingerprint += fmt::format(" waiting {}", s.waiting);
  o.gauges.push_back({"rcoord_lock_held", "", s.held ? 1.0 : 0.0});
  if (s.mode == "exclusive" && s.held_ms >= 0) {
    o.gauges.push_back({"rcoord_lock_held_seconds", "", as_double(s.held_ms) / 1000});
  }
  o.gauges.push_back({"rcoord_lock_fence", "", as_double(s.fence)});
  o.gauges.push_back({"rcoord_lock_waiting", "", as_double(s.waiting)});
}

void show_sem(Object& o, const semaphore::Status& s) {
  o.state = fmt::format("{} of {} permit(s) in use by {} holder(s), {} waiting", s.in_use, s.limit,
                        s.holders.size(), s.waiting);
  if (s.holders.size() == 1) {
    const auto& only = s.holders.front();
    o.holder = holder_name(only.taker, only.token);
    o.state += ", " + held_by(only.taker, only.token, only.ttl_ms);
  } else if (!s.holders.empty()) {
    o.holder = fmt::format("{} holders", s.holders.size());
  }
  o.waiting = s.waiting;
  std::vector<std::string> tokens;
  for (const auto& h : s.holders) {
    // The soonest lease to end: when a permit comes back if nobody gives it back sooner.
    o.ttl_ms = o.ttl_ms < 0 ? h.ttl_ms : std::min(o.ttl_ms, h.ttl_ms);
    tokens.push_back(fmt::format("{}:{}", h.token, h.permits));
  }
  std::sort(tokens.begin(), tokens.end());
  o.fingerprint = fmt::format("{} {} {} {}", s.limit, s.in_use, s.waiting, fmt::join(tokens, ","));
  o.gauges.push_back({"rcoord_sem_permits_in_use", "", as_double(s.in_use)});
  o.gauges.push_back({"rcoord_sem_limit", "", as_double(s.limit)});
  o.gauges.push_back({"rcoord_sem_waiting", "", as_double(s.waiting)});
}

void show_elect(Object& o, const elect::Status& s) {
  if (s.leader) {
    o.state =
        fmt::format("led by {}, term {}, {} left", s.id, s.term, format_elapsed(Millis(s.ttl_ms)));
    if (s.holder.known()) {
      o.state = fmt::format("led by {}: {} for {}, term {}, expires in {}", s.id,
                            describe(s.holder.who), format_elapsed(Millis(s.holder.held_ms)),
                            s.term, format_elapsed(Millis(s.ttl_ms)));
    }
    o.holder = s.id;
    o.ttl_ms = s.ttl_ms;
  } else {
    o.state = fmt::format("no leader, last term {}", s.term);
  }
  o.fingerprint = fmt::format("{} {}", s.id, s.term);
  o.gauges.push_back({"rcoord_elect_has_leader", "", s.leader ? 1.0 : 0.0});
  o.gauges.push_back({"rcoord_elect_term", "", as_double(s.term)});
}

void show_queue(Object& o, const queue::Stats& s) {
  o.state = fmt::format("ready {}, delayed {}, in flight {}, dead {}", s.ready, s.delayed,
                        s.in_flight, s.dead);
  o.fingerprint = o.state;
  o.gauges.push_back({"rcoord_queue_messages", "ready", as_double(s.ready)});
  o.gauges.push_back({"rcoord_queue_messages", "delayed", as_double(s.delayed)});
  o.gauges.push_back({"rcoord_queue_messages", "in_flight", as_double(s.in_flight)});
  o.gauges.push_back({"rcoord_queue_messages", "dead", as_double(s.dead)});
}

void show_latch(Object& o, const latch::Status& s) {
  if (!s.found) {
    o.state = "gone";
  } else {
    o.state = s.count == 0 ? "open (count 0)" : fmt::format("count {}", s.count);
    o.gauges.push_back({"rcoord_latch_remaining", "", as_double(s.count)});
  }
  o.fingerprint = o.state;
}

void show_limit(Object& o, const std::string& algo, const limit::Raw& raw) {
  auto now = limit::to_decision(raw);
  o.state = fmt::format("{}, {} of {} left, full again in {}", algo, now.remaining, now.limit,
                        format_elapsed(Millis(now.reset_after_ms)));
  o.ttl_ms = now.reset_after_ms;
  // What is left grows back by itself: the change is when it will be full again (server
  // time), which only a request moves.
  o.fingerprint = raw.reset_after_us <= 0
                      ? std::string("full")
                      : fmt::format("full at {}", raw.now_us + raw.reset_after_us);
  o.gauges.push_back({"rcoord_limit_remaining", "", as_double(now.remaining)});
}

void show_bloom(Object& o, const bloom::Info& i) {
  o.state = fmt::format("{} item(s), {} layer(s), capacity {}, {:.1f}% of bits set", i.items,
                        i.layers, i.capacity, i.fill_ratio * 100);
  o.fingerprint = fmt::format("{} {}", i.items, i.layers);
  o.gauges.push_back({"rcoord_bloom_items", "", as_double(i.items)});
  o.gauges.push_back({"rcoord_bloom_fill_ratio", "", i.fill_ratio});
}

// A count: the state line says what it counts (`unit`).
void show_count(Object& o, std::int64_t n, std::string_view unit) {
  o.state = fmt::format("{} {}", n, unit);
  o.fingerprint = std::to_string(n);
}

// --- the first round of each type --------------------------------------------------------------

// A limit: the parameters its state keeps, then a peek with them (nothing consumed).
void probe_limit(Probe& p, const Keys& keys) {
  const std::string& name = p.object.name;
  std::string key = keys.object("limit", name);
  next_round(p, {plain(limit::stored_params_command(keys, name)), plain({"PTTL", key})},
             [&keys](Probe& q, std::span<const Reply> r) {
               Object& o = q.object;
               std::string algo = r[0]->type == REDIS_REPLY_ARRAY && r[0]->elements > 0
                                      ? reply_string(r[0]->element[0])
                                      : std::string();
               auto params = limit::decode_stored_params(r[0].get());
               if (algo.empty()) {
                 o.state = "no state (idle)";
                 o.fingerprint = "idle";
               } else if (!params) {
                 // State written before the burst was kept: no peek, only its expiry.
                 std::int64_t ttl = std::max<std::int64_t>(0, reply_integer(r[1].get()));
                 o.state = fmt::format("{}, back to full in at most {}", algo,
                                       format_elapsed(Millis(ttl)));
                 o.ttl_ms = ttl;
                 o.fingerprint = algo;
               } else {
                 next_round(q, {limit::peek_call(keys, o.name, *params)},
                            [algo](Probe& q2, std::span<const Reply> r2) {
                              show_limit(q2.object, algo, limit::decode_raw(r2[0].get()));
                            });
               }
             });
}

// A Bloom filter: its metadata, then each layer's bit count and size.
void probe_bloom(Probe& p, const Keys& keys) {
  std::vector<Call> calls;
  for (auto& args : bloom::meta_commands(keys, p.object.name)) calls.push_back(plain(args));
  next_round(p, std::move(calls), [&keys](Probe& q, std::span<const Reply> r) {
    bloom::Meta meta;
    if (!bloom::decode_meta(r[0].get(), r[1].get(), keys.object("bloom", q.object.name), meta)) {
      q.object.state = "no filter";
      q.object.fingerprint = q.object.state;
      return;
    }
    std::vector<Call> layers;
    for (auto& args : bloom::layer_commands(keys, q.object.name, meta)) {
      layers.push_back(plain(args));
    }
    next_round(q, std::move(layers), [&keys, meta](Probe& q2, std::span<const Reply> r2) {
      show_bloom(q2.object, bloom::decode_info(keys, q2.object.name, meta, r2));
    });
  });
}

// One command whose integer reply is the object's size; `unit` names what it counts.
void probe_count(Probe& p, Args command, std::string_view unit) {
  next_round(p, {plain(std::move(command))}, [unit](Probe& q, std::span<const Reply> r) {
    show_count(q.object, reply_integer(r[0].get()), unit);
  });
}

// A type whose state one script call reads: `decode` turns the reply into what `show` shows.
template <typename Decode, typename Show>
void probe_script(Probe& p, Call call, Decode decode, Show show) {
  next_round(p, {std::move(call)}, [decode, show](Probe& q, std::span<const Reply> r) {
    show(q.object, decode(r[0].get()));
  });
}

// The objects whose writes take --expire: their main key's PTTL is when the object ends.
bool may_expire(const std::string& type) {
  return type == "bloom" || type == "pf" || type == "complete" || type == "recent";
}

// Adds to the probe's first round what every object of its type needs besides its state, in
// the same pipeline: whether anything but a kept counter is left (a lock, election or queue
// that rm removed keeps only its fence, term or ids, so that they never repeat: that is not
// an object to report), and when an object given --expire ends.
void with_presence_and_expiry(Probe& p, const Keys& keys) {
  const std::string& type = p.object.type;
  const std::string& name = p.object.name;
  std::vector<Call> extra;
  auto exists = removal::presence_command(keys, type, name);
  bool check_presence = exists.has_value();
  if (exists) extra.push_back(plain(std::move(*exists)));
  bool check_expiry = may_expire(type);
  if (check_expiry) extra.push_back(plain({"PTTL", keys.object(type, name)}));
  if (extra.empty()) return;
  std::size_t n = extra.size();
  for (auto& c : p.calls) extra.push_back(std::move(c));
  auto decode = std::move(p.decode);
  next_round(p, std::move(extra),
             [n, check_presence, check_expiry, decode](Probe& q, std::span<const Reply> r) {
               std::size_t at = 0;
               if (check_presence && reply_integer(r[at++].get()) == 0) {
                 q.dropped = true;
                 return;
               }
               if (check_expiry) {
                 const Reply& pttl = r[at++];
                 if (pttl->type == REDIS_REPLY_INTEGER && pttl->integer >= 0) {
                   q.object.expires_in_ms = pttl->integer;
                 }
               }
               decode(q, r.subspan(n));  // may ask for more rounds: the state is shown after them
             });
}

Probe probe_for(const Keys& keys, std::string type, std::string name) {
  Probe p;
  p.object.type = std::move(type);
  p.object.name = std::move(name);
  const std::string& t = p.object.type;
  const std::string& n = p.object.name;
  if (t == "lock") {
    probe_script(p, lock::status_call(keys, n), lock::decode_status, show_lock);
  } else if (t == "sem") {
    probe_script(p, semaphore::status_call(keys, n), semaphore::decode_status, show_sem);
  } else if (t == "limit") {
    probe_limit(p, keys);
  } else if (t == "bloom") {
    probe_bloom(p, keys);
  } else if (t == "pf") {
    next_round(p, {plain({"PFCOUNT", keys.object(t, n)})}, [](Probe& q, std::span<const Reply> r) {
      std::int64_t count = reply_integer(r[0].get());
      q.object.state = fmt::format("~{} distinct", count);
      q.object.fingerprint = std::to_string(count);
      q.object.gauges.push_back({"rcoord_pf_estimate", "", as_double(count)});
    });
  } else if (t == "complete") {
    probe_count(p, {"ZCARD", keys.object(t, n)}, "term(s)");
  } else if (t == "recent") {
    probe_count(p, {"LLEN", keys.object(t, n)}, "item(s)");
  } else if (t == "elect") {
    probe_script(p, elect::status_call(keys, n), elect::decode_status, show_elect);
  } else if (t == "queue") {
    probe_script(p, queue::stats_call(keys, n), queue::decode_stats, show_queue);
  } else if (t == "signal") {
    next_round(p, {plain({"ZCARD", keys.object(t, n)})}, [](Probe& q, std::span<const Reply> r) {
      std::int64_t waiters = reply_integer(r[0].get());
      show_count(q.object, waiters, "waiter(s) registered");
      q.object.waiting = waiters;
    });
  } else if (t == "latch") {
    probe_script(p, latch::status_call(keys, n), latch::decode_status, show_latch);
  }
  with_presence_and_expiry(p, keys);
  return p;
}

// --- reading a batch ------------------------------------------------------------------------

// Hands one round's replies to the probe's decoder; an object whose keys hold something else
// is reported unreadable rather than ending the pass.
void settle(Connection& node, Probe& p, std::span<const Call> calls,
            std::span<const Reply> replies) {
  std::vector<Reply> moved;
  bool redirected = std::any_of(replies.begin(), replies.end(),
                                [](const Reply& r) { return cluster::is_redirect(r.get()); });
  if (redirected) {
    // Its slot moved after SCAN found it there: ask where it is now, on a connection of its
    // own (`node` must stay on the master it walks).
    Connection elsewhere(node.endpoint(), node.timeout());
    moved = send_calls_routed(elsewhere, {calls.begin(), calls.end()});
    replies = moved;
  }
  try {
    for (std::size_t k = 0; k < replies.size(); ++k) {
      if (replies[k]->type == REDIS_REPLY_ERROR) throw call_error(replies[k].get(), calls[k]);
    }
    auto decode = std::move(p.decode);
    p.decode = nullptr;
    decode(p, replies);
  } catch (const Error& e) {
    if (e.code() != kServer) throw;
    p.calls.clear();
    p.object.state = fmt::format("unreadable: {}", e.what());
    p.object.fingerprint = p.object.state;
    p.object.gauges.clear();
  }
}

// Reads the states of `probes`, all on the node `node` is on: one pipeline per round.
void read_states(Connection& node, std::vector<Probe>& probes) {
  for (;;) {
    std::vector<Call> calls;
    std::vector<std::size_t> first(probes.size(), 0);
    for (std::size_t i = 0; i < probes.size(); ++i) {
      first[i] = calls.size();
      for (auto& c : probes[i].calls) calls.push_back(std::move(c));
      probes[i].calls.clear();
    }
    if (calls.empty()) return;
    auto replies = send_calls(node, calls);
    for (std::size_t i = 0; i < probes.size(); ++i) {
      std::size_t end = i + 1 < probes.size() ? first[i + 1] : calls.size();
      if (end == first[i]) continue;
      settle(node, probes[i], std::span<const Call>(calls).subspan(first[i], end - first[i]),
             std::span<const Reply>(replies).subspan(first[i], end - first[i]));
    }
  }
}

// `<prefix>{type:name}` or `<prefix>{type:name}:suffix` -> type, name and suffix ("" for the
// main key); false otherwise.
bool parse_key(const std::string& key, const std::string& prefix, std::string& type,
               std::string& name, std::string& suffix) {
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
  suffix = close + 1 < key.size() ? key.substr(close + 2) : std::string();
  return true;
}

bool known_type(std::string_view type) {
  return std::find(types().begin(), types().end(), type) != types().end();
}

// One SCAN walk over the keys of the node `node` is on; the states of the objects found are
// read there too (their keys are there), a batch at a time. SCAN's MATCH only narrows the
// walk: its `*` for the type can swallow part of a name (`{*:fence}` matches the lock
// `a:fence`), so each name found is matched against the pattern again, whole.
void scan_node(Connection& node, const Keys& keys, const Query& query, const std::string& match,
               std::unordered_set<std::string>& seen, std::size_t& found,
               const std::function<void(const Object&)>& each) {
  std::vector<Probe> batch;
  auto flush = [&] {
    if (query.states) read_states(node, batch);
    for (auto& p : batch) {
      if (p.dropped) continue;
      if (p.object.expires_in_ms >= 0) {
        p.object.state +=
            fmt::format(", expires in {}", format_elapsed(Millis(p.object.expires_in_ms)));
      }
      ++found;
      each(p.object);
    }
    batch.clear();
  };
  std::string cursor = "0";
  do {
    Reply r = node.command({"SCAN", cursor, "MATCH", match, "COUNT", "1000"});
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
      throw Error(kServer, "unexpected reply to SCAN");
    }
    cursor = reply_string(r->element[0]);
    const redisReply* page = r->element[1];
    for (std::size_t i = 0; i < page->elements; ++i) {
      std::string type;
      std::string name;
      std::string suffix;
      if (!parse_key(reply_string(page->element[i]), keys.prefix(), type, name, suffix)) continue;
      if (!known_type(type)) continue;
      // A fence, term or id counter alone is what rm leaves of an object, and a history what
      // an object leaves once it ends: only another of its keys makes it one (with states,
      // the probe checks that again, as of its own read).
      if (removal::leaves_no_object(type, suffix)) continue;
      if (!query.pattern.empty() && !glob_match(query.pattern, name)) continue;
      std::string seen_key = type;
      seen_key += '\0';
      seen_key += name;
      if (!seen.insert(std::move(seen_key)).second) continue;
      if (query.states) {
        batch.push_back(probe_for(keys, std::move(type), std::move(name)));
      } else {
        batch.emplace_back();
        batch.back().object.type = std::move(type);
        batch.back().object.name = std::move(name);
      }
      if (batch.size() >= kBatch) flush();
    }
  } while (cursor != "0");
  flush();
}

}  // namespace

const std::vector<std::string>& types() {
  static const std::vector<std::string> kTypes = {"lock",  "sem",      "limit",  "bloom",
                                                  "pf",    "complete", "recent", "elect",
                                                  "queue", "signal",   "latch"};
  return kTypes;
}

Connection& Nodes::to(const Endpoint& endpoint, Millis timeout) {
  for (auto& c : conns_) {
    const Endpoint& known = c.endpoint();
    if (known.host == endpoint.host && known.port == endpoint.port &&
        known.socket_path == endpoint.socket_path) {
      return c;
    }
  }
  return conns_.emplace_back(endpoint, timeout);
}

Pass survey(Connection& conn, const Keys& keys, const Query& query,
            const std::function<void(const Object&)>& each, Nodes* nodes) {
  if (!query.type.empty() && !known_type(query.type)) {
    throw Error(kUsage, fmt::format("unknown --type '{}'", query.type),
                "use lock, sem, limit, bloom, pf, complete, recent, elect, queue, signal or latch");
  }
  std::string match = glob_escape(keys.prefix()) + "{" +
                      (query.type.empty() ? std::string("*") : query.type) + ":" +
                      (query.pattern.empty() ? std::string("*") : query.pattern) + "}*";
  std::unordered_set<std::string> seen;  // an object has several keys: report it once
  Pass pass;
  auto masters = cluster::masters(conn);
  if (!masters) {
    scan_node(conn, keys, query, match, seen, pass.found, each);
    return pass;
  }
  // A cluster: each master holds the keys of its own slots, so every one is walked (an
  // object in a slot being migrated may show up on both nodes: `seen` reports it once). A
  // master that cannot be reached does not hide the others' objects. A connection error
  // thrown by `each` (its output failed) is not a master's and ends the pass.
  pass.masters = masters->size();
  bool in_each = false;
  auto reported = [&](const Object& o) {
    in_each = true;
    each(o);
    in_each = false;
  };
  for (const auto& endpoint : *masters) {
    try {
      std::optional<Connection> own;
      Connection& node = nodes != nullptr ? nodes->to(endpoint, conn.timeout())
                                          : own.emplace(endpoint, conn.timeout());
      scan_node(node, keys, query, match, seen, pass.found, reported);
    } catch (const Error& e) {
      if (e.code() != kConnection || in_each) throw;
      pass.unreachable.emplace_back(e.what());
    }
  }
  return pass;
}

Error unreachable_error(const Pass& pass, std::string_view verb) {
  return {kConnection,
          fmt::format("{} of {} cluster masters were not {}: {}", pass.unreachable.size(),
                      pass.masters, verb, fmt::join(pass.unreachable, "; ")),
          "the objects of the other masters are shown; check the cluster with rcoord doctor"};
}

std::size_t list(Connection& conn, const Keys& keys, const Query& query,
                 const std::function<void(const Object&)>& each) {
  Pass pass = survey(conn, keys, query, each);
  if (!pass.unreachable.empty()) throw unreachable_error(pass);
  return pass.found;
}

}  // namespace rcoord::inventory
