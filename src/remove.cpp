#include "remove.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "bloom.hpp"
#include "errors.hpp"
#include "gate.hpp"
#include "limit.hpp"
#include "lua_scripts.hpp"
#include "script.hpp"

namespace rcoord::removal {
namespace {

struct Suffix {
  std::string_view suffix;  ///< "" for the main key
  std::string_view kind;
  bool kept = false;    ///< a counter rm keeps
  bool record = false;  ///< what happened to it (its history), not its state: rm deletes it,
                        ///< but alone it is no object
};

// Each type's keys, in the order of its scripts' KEYS (src/lua/rm.lua reads some by
// position: a lock's readers are KEYS[3] of what goes, a queue's in-flight zset KEYS[4], and
// a history's cap is the key right after the history).
const std::vector<Suffix>* layout(std::string_view type) {
  static const std::vector<Suffix> kLock = {{"", "hash"},
                                            {"fence", "string", true},
                                            {"wake", "list"},
                                            {"readers", "zset"},
                                            {"writers", "zset"},
                                            {"rwait", "zset"},
                                            {"rfence", "hash"},
                                            {"rwho", "hash"},
                                            {"history", "stream", false, true},
                                            {"history:cap", "string", false, true},
                                            {"taken", "string", false, true},
                                            {"watchers", "zset"},
                                            {"stats", "hash", false, true}};
  static const std::vector<Suffix> kSem = {{"", "zset"},
                                           {"permits", "hash"},
                                           {"queue", "zset"},
                                           {"alive", "zset"},
                                           {"wants", "hash"},
                                           {"seq", "string"},
                                           {"meta", "hash"},
                                           {"who", "hash"},
                                           {"history", "stream", false, true},
                                           {"history:cap", "string", false, true},
                                           {"watchers", "zset"},
                                           {"stats", "hash", false, true}};
  static const std::vector<Suffix> kElect = {{"", "hash"},
                                             {"term", "string", true},
                                             {"wake", "list"},
                                             {"history", "stream", false, true},
                                             {"history:cap", "string", false, true},
                                             {"taken", "string", false, true},
                                             {"stats", "hash", false, true}};
  static const std::vector<Suffix> kQueue = {{"", "hash"},
                                             {"ready", "list"},
                                             {"delayed", "zset"},
                                             {"inflight", "zset"},
                                             {"dead", "zset"},
                                             {"attempts", "hash"},
                                             {"wake", "list"},
                                             {"seq", "string", true},
                                             {"consumer", "hash"},
                                             {"history", "stream", false, true},
                                             {"history:cap", "string", false, true}};
  // A limit's keys are those of each rate it may be checked with (object_keys, below).
  static const std::vector<Suffix> kLimit = {};
  static const std::vector<Suffix> kBloom = {{"", "hash"}};
  static const std::vector<Suffix> kPf = {{"", "string"}};
  static const std::vector<Suffix> kComplete = {{"", "zset"}, {"scores", "zset"}};
  static const std::vector<Suffix> kRecent = {{"", "list"}};
  static const std::vector<Suffix> kSignal = {{"", "zset"}};
  static const std::vector<Suffix> kLatch = {{"", "hash"}};
  // A gate's record is named by its token, its take counters by its parts (gate.hpp).
  static const std::vector<Suffix> kGate = {{"", "hash"}, {"stats", "hash", false, true}};
  if (type == "lock") return &kLock;
  if (type == "sem") return &kSem;
  if (type == "elect") return &kElect;
  if (type == "queue") return &kQueue;
  if (type == "limit") return &kLimit;
  if (type == "bloom") return &kBloom;
  if (type == "pf") return &kPf;
  if (type == "complete") return &kComplete;
  if (type == "recent") return &kRecent;
  if (type == "signal") return &kSignal;
  if (type == "latch") return &kLatch;
  if (type == "gate") return &kGate;
  return nullptr;
}

// The take counters of the gates of some parts (the name `metrics` gives them, gate.hpp's
// counters_name): nothing holds them, so they go as any object's counters go with it.
Removed remove_gate_counters(Connection& conn, const Keys& keys, std::string_view name,
                             const Options& opts, Removed out) {
  std::string counters = keys.aux("gate", name, "stats");
  // A dry run asks whether they are there; a removal deletes them and learns it from DEL.
  Args ask{opts.dry_run ? "EXISTS" : "DEL", counters};
  if (reply_integer(conn.command(ask).get()) == 0) {
    out.absent = true;
    out.reason = "no such gate";
    return out;
  }
  out.keys = 1;
  out.would_remove = opts.dry_run;
  out.removed = !opts.dry_run;
  return out;
}

// A gate is its record: there while the token holds its parts, so always in use. With
// --force its parts are given back (each recording who did) and the record deleted. A name
// with no record may be a gate's counters.
Removed remove_gate(Connection& conn, const Keys& keys, std::string_view token, const Options& opts,
                    Removed out) {
  auto parts = gate::recorded_parts(conn, keys, token);
  if (!parts) return remove_gate_counters(conn, keys, token, opts, std::move(out));
  out.keys = 1;
  std::vector<std::string> shown;
  for (const auto& part : *parts) shown.push_back(gate::describe(part));
  out.reason = fmt::format("held: {}", fmt::join(shown, ", "));
  if (!opts.force) return out;
  if (opts.dry_run) {
    out.would_remove = true;
    return out;
  }
  gate::give_back_all(conn, keys, *parts, token, Ending{.who = opts.who});
  out.removed = true;
  return out;
}

}  // namespace

std::vector<ObjectKey> object_keys(const Keys& keys, std::string_view type, std::string_view name) {
  const auto* suffixes = layout(type);
  if (suffixes == nullptr) {
    throw Error(
        kUsage, fmt::format("unknown --type '{}'", type),
        "use lock, sem, limit, bloom, pf, complete, recent, elect, queue, signal, latch or gate");
  }
  check_name(object_noun(type), name);
  std::vector<ObjectKey> out;
  if (type == "limit") {
    // The state and log of every rate it may be checked with, the first in its main key.
    for (std::size_t i = 0; i < limit::kMaxRates; ++i) {
      auto [state, log] = limit::rate_keys(keys, name, i);
      out.push_back({std::move(state), "hash"});
      out.push_back({std::move(log), "zset"});
    }
    return out;
  }
  for (const auto& s : *suffixes) {
    out.push_back({s.suffix.empty() ? keys.object(type, name) : keys.aux(type, name, s.suffix),
                   s.kind, s.kept, s.record});
  }
  return out;
}

Removed remove(Connection& conn, const Keys& keys, std::string_view type, std::string_view name,
               const Options& opts) {
  auto all = object_keys(keys, type, name);
  Removed out;
  out.type = std::string(type);
  out.name = std::string(name);
  out.dry_run = opts.dry_run;
  if (type == "gate") return remove_gate(conn, keys, name, opts, std::move(out));
  // A Bloom filter's layers are named by its metadata; the script refuses a stale count, and
  // the filter is read again (it may grow a layer meanwhile).
  for (int attempt = 0; attempt < 100; ++attempt) {
    Args script_keys;
    Args args{std::string(type),
              opts.force ? "1" : "0",
              opts.dry_run ? "1" : "0",
              std::string(object_noun(type)),
              "0",
              "0",
              std::to_string(keys.history_cap()),
              opts.who};
    Args kinds;
    const std::string history = keys.history(type, name);
    for (const auto& k : all) {
      if (k.kept) continue;
      script_keys.push_back(k.key);
      kinds.emplace_back(k.kind);
      if (k.key == history) args[5] = std::to_string(script_keys.size());
    }
    if (type == "bloom") {
      bloom::Meta meta;
      std::size_t layers = 0;
      if (bloom::read_meta(conn, keys, name, meta)) layers = meta.layers.size();
      // A filter whose metadata is gone may have left its first layer behind.
      for (std::size_t i = 0; i < std::max<std::size_t>(layers, 1); ++i) {
        script_keys.push_back(keys.aux(type, name, std::to_string(i)));
        kinds.emplace_back("string");
      }
      args[4] = std::to_string(layers);
    }
    args.insert(args.end(), kinds.begin(), kinds.end());
    Reply r = eval(conn, lua::kRm, script_keys, args);
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
      throw Error(kServer, "unexpected reply from the rm script");
    }
    std::int64_t status = reply_integer(r->element[0]);
    if (status == -2) continue;
    out.keys = reply_integer(r->element[1]);
    out.reason = reply_string(r->element[2]);
    if (status == -1) {
      out.absent = true;
      out.reason = fmt::format("no such {}", object_noun(type));
    } else if (status == 1) {
      out.removed = !opts.dry_run;
      out.would_remove = opts.dry_run;
    }
    return out;
  }
  throw Error(kServer, fmt::format("bloom filter '{}' keeps growing: it was not removed", name),
              "stop the writers, then run rm again");
}

bool leaves_no_object(std::string_view type, std::string_view suffix) {
  const auto* suffixes = layout(type);
  if (suffixes == nullptr || suffix.empty()) return false;
  return std::any_of(suffixes->begin(), suffixes->end(), [suffix](const Suffix& s) {
    return (s.kept || s.record) && s.suffix == suffix;
  });
}

std::optional<Args> presence_command(const Keys& keys, std::string_view type,
                                     std::string_view name) {
  Args exists{"EXISTS"};
  bool has_other = false;
  for (const auto& k : object_keys(keys, type, name)) {
    if (k.kept || k.record) {
      has_other = true;
    } else {
      exists.push_back(k.key);
    }
  }
  if (!has_other || exists.size() == 1) return std::nullopt;
  return exists;
}

bool only_counters_left(Connection& conn, const Keys& keys, std::string_view type,
                        std::string_view name) {
  auto exists = presence_command(keys, type, name);
  return exists && reply_integer(conn.command(*exists).get()) == 0;
}

}  // namespace rcoord::removal
