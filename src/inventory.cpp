#include "inventory.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <span>
#include <unordered_set>

#include "bloom.hpp"
#include "cluster.hpp"
#include "elect.hpp"
#include "errors.hpp"
#include "gate.hpp"
#include "identity.hpp"
#include "inventory_probe.hpp"
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

double as_double(std::int64_t v) { return static_cast<double>(v); }

// Reading one object's state: the calls of its next round, and what makes sense of their
// replies. A decoder may ask for one more round (a limit's peek needs the parameters its
// state keeps, a Bloom filter's fill its number of layers).
struct Probe {
  Object object;
  std::vector<Call> calls;
  std::function<void(Probe&, std::span<const Reply>)> decode;
  // The first round of a type read against the server's clock (inventory_probe.hpp), made
  // once the batch has asked the server for the time.
  std::function<void(Probe&, std::int64_t now_ms)> start;
  bool dropped = false;  // not an object to report (rm left only its counter)
};

Call plain(Args args) { return {std::move(args), nullptr}; }

void next_round(Probe& p, std::vector<Call> calls,
                std::function<void(Probe&, std::span<const Reply>)> decode) {
  p.calls = std::move(calls);
  p.decode = std::move(decode);
}

// --- what each type's state says ------------------------------------------------------------

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

// A gate: the parts its record lists (each shown, held and counted, as an object of its own)
// and how long the record has left.
void probe_gate(Probe& p, const Keys& keys) {
  std::string key = gate::record_key(keys, p.object.name);
  next_round(p, {plain({"HGETALL", key}), plain({"PTTL", key})},
             [key](Probe& q, std::span<const Reply> r) {
               auto parts = gate::decode_record(r[0].get(), key);
               if (!parts) {
                 q.dropped = true;  // released since the walk found it
                 return;
               }
               std::vector<std::string> shown;
               for (const auto& part : *parts) shown.push_back(gate::describe(part));
               Object& o = q.object;
               o.ttl_ms = std::max<std::int64_t>(0, reply_integer(r[1].get()));
               o.state = fmt::format("holds {}, expires in {}", fmt::join(shown, ", "),
                                     format_elapsed(Millis(o.ttl_ms)));
               o.fingerprint = fmt::format("{}", fmt::join(shown, ", "));
               // No gauge: each gate is one token, a series of its own that would not come
               // back (its parts are exported as the objects they are).
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

// Runs the rounds of a reading (inventory_probe.hpp), then `show`s what it read, or drops an
// object of which only what rm keeps is left.
template <typename Status, typename Show>
void follow(Probe& p, reads::Reading<Status> reading, Show show) {
  if (reading.commands.empty()) {
    if (reading.status) {
      show(p.object, *reading.status);
    } else {
      p.dropped = true;
    }
    return;
  }
  std::vector<Call> calls;
  for (auto& args : reading.commands) calls.push_back(plain(std::move(args)));
  next_round(p, std::move(calls),
             [then = std::move(reading.then), show](Probe& q, std::span<const Reply> r) {
               follow(q, then(r), show);
             });
}

// A type whose state plain reads give against the server's clock: `Read` reads it, `Show`
// shows it. Both are template arguments, so the closure kept per object is one reference.
template <auto Read, auto Show>
void probe_read(Probe& p, const Keys& keys) {
  p.start = [&keys](Probe& q, std::int64_t now_ms) {
    follow(q, Read(keys, q.object.name, now_ms), Show);
  };
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
  if (p.start) return;  // its reading checks what is left itself, and none of them expires
  // A gate is its record, which its probe reads (and finds gone, leaving only counters).
  if (p.object.type == "gate") return;
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

// The counters' hash (HGETALL) as what it counts (fields it does not know are left out), or
// nullopt when there is none (no take counted yet, or an older rcoord's object).
std::optional<Contention> contention_of(const redisReply* r) {
  if (r->type != REDIS_REPLY_ARRAY) throw Error(kServer, "unexpected reply to HGETALL");
  if (r->elements == 0) return std::nullopt;
  Contention c;
  for (std::size_t i = 0; i + 1 < r->elements; i += 2) {
    std::string field = reply_string(r->element[i]);
    std::int64_t n = 0;
    std::string value = reply_string(r->element[i + 1]);
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size()) continue;
    if (field == "acquired") {
      c.acquired = n;
    } else if (field == "busy") {
      c.busy = n;
    } else if (field == "lost") {
      c.lost = n;
    } else if (field == "wait_ms") {
      c.wait_ms = n;
    } else if (field == "le:inf") {
      c.waits.back() = n;
    } else if (field.starts_with("le:")) {
      for (std::size_t b = 0; b < Contention::kBoundsMs.size(); ++b) {
        if (field == "le:" + std::to_string(Contention::kBoundsMs[b])) c.waits[b] = n;
      }
    }
  }
  return c;
}

// The take counters of a lock, semaphore or election, read in the first round of its state
// (the same pipeline): `metrics` exports them.
void with_contention(Probe& p, const Keys& keys) {
  p.start = [&keys, start = std::move(p.start)](Probe& q, std::int64_t now_ms) {
    start(q, now_ms);
    if (q.calls.empty()) return;
    std::vector<Call> calls{plain({"HGETALL", keys.aux(q.object.type, q.object.name, "stats")})};
    for (auto& c : q.calls) calls.push_back(std::move(c));
    next_round(q, std::move(calls),
               [decode = std::move(q.decode)](Probe& q2, std::span<const Reply> r) {
                 q2.object.contention = contention_of(r[0].get());
                 decode(q2, r.subspan(1));
               });
  };
}

// A gate's take counters, read beside its record. They are named by the gate's parts, not by a
// token (gate::counters_name): the walk finds them alone, with no record (probe_gate drops it,
// and the counters are reported).
void with_gate_contention(Probe& p, const Keys& keys) {
  std::vector<Call> calls{plain({"HGETALL", keys.aux("gate", p.object.name, "stats")})};
  for (auto& c : p.calls) calls.push_back(std::move(c));
  next_round(p, std::move(calls),
             [decode = std::move(p.decode)](Probe& q, std::span<const Reply> r) {
               q.object.contention = contention_of(r[0].get());
               decode(q, r.subspan(1));
             });
}

Probe probe_for(const Keys& keys, std::string type, std::string name, bool contention) {
  Probe p;
  p.object.type = std::move(type);
  p.object.name = std::move(name);
  const std::string& t = p.object.type;
  const std::string& n = p.object.name;
  if (t == "lock") {
    probe_read<reads::read_lock, show_lock>(p, keys);
  } else if (t == "sem") {
    probe_read<reads::read_sem, show_sem>(p, keys);
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
    probe_read<reads::read_elect, show_elect>(p, keys);
  } else if (t == "queue") {
    probe_read<reads::read_queue, show_queue>(p, keys);
  } else if (t == "signal") {
    next_round(p, {plain({"ZCARD", keys.object(t, n)})}, [](Probe& q, std::span<const Reply> r) {
      std::int64_t waiters = reply_integer(r[0].get());
      show_count(q.object, waiters, "waiter(s) registered");
      q.object.waiting = waiters;
    });
  } else if (t == "latch") {
    probe_read<reads::read_latch, show_latch>(p, keys);
  } else if (t == "gate") {
    probe_gate(p, keys);
  }
  if (contention && (t == "lock" || t == "sem" || t == "elect")) with_contention(p, keys);
  if (contention && t == "gate") with_gate_contention(p, keys);
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
      if (replies[k]->type != REDIS_REPLY_ERROR) continue;
      // A plain read of a key that holds another type: name the object and the key, as a
      // status script's refusal does.
      if (calls[k].script == nullptr && calls[k].args.size() > 1) {
        check_key_reply(replies[k], calls[k].args.front(), calls[k].args[1]);
      }
      throw call_error(replies[k].get(), calls[k]);
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
    p.object.contention.reset();
  }
}

// Reads the states of `probes`, all on the node `node` is on: one pipeline per round. The
// server's clock is asked once for the batch, not once per object.
void read_states(Connection& node, std::vector<Probe>& probes) {
  if (std::any_of(probes.begin(), probes.end(), [](const Probe& p) { return bool(p.start); })) {
    std::int64_t now_ms = reads::server_ms(node.command({"TIME"}).get());
    for (auto& p : probes) {
      if (!p.start) continue;
      auto start = std::move(p.start);
      p.start = nullptr;
      start(p, now_ms);
    }
  }
  for (;;) {
    // Sized once: each large block allocated makes malloc sweep the many small ones the
    // last round freed, which showed in profiles of a pass.
    std::size_t total = 0;
    for (const auto& p : probes) total += p.calls.size();
    std::vector<Call> calls;
    calls.reserve(total);
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
               const std::function<void(Object&)>& each) {
  std::vector<Probe> batch;
  auto flush = [&] {
    if (query.states) read_states(node, batch);
    for (auto& p : batch) {
      // Nothing is left but what rm keeps, and the take counters when they were read: those
      // are reported alone (a lock free between its jobs still has its counts).
      if (p.dropped && !p.object.contention) continue;
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
      // An object's take counters outlive its state: `metrics` exports them meanwhile.
      bool counted = query.contention && suffix == "stats";
      if (removal::leaves_no_object(type, suffix) && !counted) continue;
      if (!query.pattern.empty() && !glob_match(query.pattern, name)) continue;
      std::string seen_key = type;
      seen_key += '\0';
      seen_key += name;
      if (!seen.insert(std::move(seen_key)).second) continue;
      if (query.states) {
        batch.push_back(probe_for(keys, std::move(type), std::move(name), query.contention));
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
                                                  "queue", "signal",   "latch",  "gate"};
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
            const std::function<void(Object&)>& each, Nodes* nodes) {
  if (!query.type.empty() && !known_type(query.type)) {
    throw Error(
        kUsage, fmt::format("unknown --type '{}'", query.type),
        "use lock, sem, limit, bloom, pf, complete, recent, elect, queue, signal, latch or gate");
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
  auto reported = [&](Object& o) {
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
