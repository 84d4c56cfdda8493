#pragma once
/// `rcoord rm`: delete every key of an object, unless it is in use (SPEC lifecycle).
///
/// What goes is each type's fixed set of keys (see object_keys()) and, for a Bloom filter,
/// every layer. What stays: a lock's fence counter, an election's term counter and a queue's
/// id counter, so a fence, a term or a message id is never handed out twice, and the history
/// of an object removed while in use (remove()); `ls` does not list an object that has
/// nothing else left. Wake-up lists named after one waiter (a
/// semaphore ticket, a reader, a signal waiter) expire by themselves within seconds.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "keys.hpp"

namespace rcoord::removal {

/// One key of an object.
struct ObjectKey {
  std::string key;
  std::string_view kind;  ///< the Redis type rcoord keeps there ("" when any)
  bool kept = false;      ///< a counter that rm leaves (fence, term, ids)
  bool record = false;    ///< its history: rm removes it, but alone it is no object
};

/// The fixed keys of object `name` of type tag `type` (every type `ls --type` knows), kept
/// counters included. A Bloom filter's layers are not among them (their number is in its
/// metadata). Throws Error(kUsage) for an unknown type or a bad name.
std::vector<ObjectKey> object_keys(const Keys& keys, std::string_view type, std::string_view name);

struct Options {
  bool force = false;    ///< remove what is in use too
  bool dry_run = false;  ///< say what would go, change nothing
  std::string who{};     ///< who removes it (pack()), for the `removed` event
};

/// Member names are the JSON fields (SPEC: type, name, removed, keys, reason).
struct Removed {
  std::string type;
  std::string name;
  bool removed = false;       ///< with dry_run: always false (nothing was)
  bool would_remove = false;  ///< dry_run only: it would have been removed
  bool dry_run = false;
  bool absent = false;    ///< there was nothing to remove
  std::int64_t keys = 0;  ///< the object's keys found: those that went (dry_run: would go)
  std::string reason;     ///< why not (absent, in use), or with force how it was in use
};

/// Removes object `name` of type `type` in one script: refused (removed=false, reason) when
/// it is in use and !opts.force, absent when it has no key left to remove. One removed while
/// in use (opts.force) keeps its history (when history is recorded, Keys::history_cap), with
/// a `removed` event of opts.who and what it held; the history then expires by itself. Throws
/// Error(kServer) when a key holds something rcoord did not write.
Removed remove(Connection& conn, const Keys& keys, std::string_view type, std::string_view name,
               const Options& opts);

/// The EXISTS over the keys of object `name` that make it an object, when its type has others
/// (a counter rm keeps, a history): its reply 0 means nothing is left but those, so `ls`
/// skips the object. nullopt for the other types.
std::optional<Args> presence_command(const Keys& keys, std::string_view type,
                                     std::string_view name);

/// Whether the auxiliary key `suffix` (what follows `}:`; "" for the main key) of an object of
/// type `type` is a counter rm keeps or its history. Found alone, it is no object: `ls` skips
/// such a key, so that an object rm removed, or one that ended, is not listed, not even by
/// `ls --names` (which reads no state).
bool leaves_no_object(std::string_view type, std::string_view suffix);

/// Whether object `name` has nothing left but the counters rm keeps (presence_command).
bool only_counters_left(Connection& conn, const Keys& keys, std::string_view type,
                        std::string_view name);

}  // namespace rcoord::removal
