#pragma once
/// Autocomplete: prefix search over terms, case-insensitive for all of Unicode, optionally
/// ranked by popularity; and capped most-recent-first lists.
///
/// Keys: `<prefix>{complete:INDEX}` a sorted set whose members are `folded \0 term` with
/// score 0, searched with ZRANGE BYLEX (folded = simple case folding, see casefold.hpp);
/// `<prefix>{complete:INDEX}:scores` a sorted set with the same members, scored by
/// popularity (it exists once a term was added with --score or --incr);
/// `<prefix>{recent:LIST}` a list of items, most recent first.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"

namespace rcoord::complete {

/// Terms per EVALSHA of `complete add` (and per batch of stdin input).
constexpr std::size_t kBatchSize = 500;

/// The exclusive upper end, in ZRANGE BYLEX form, of the strings that start with `prefix`:
/// `(` and the smallest string above them all (the prefix with its last byte that is not
/// 0xFF raised by one, the 0xFF bytes after it dropped), or `+` when there is none (an empty
/// prefix, or one of 0xFF bytes only). Byte order, as Redis compares.
std::string lex_upper_bound(std::string_view prefix);

/// The member of `term` in the index: its folded form, a NUL byte, the term itself.
std::string member_of(std::string_view term);

struct AddOptions {
  std::optional<double> score;  ///< --score S: set the score (with incr: add S)
  bool incr = false;            ///< --incr: add 1 (or S)
  Millis expire{0};             ///< --expire: both keys end this long after the add (0: kept)
};

struct Added {
  std::string term;
  bool added = false;   ///< the term is new in the index
  bool scored = false;  ///< the term has a score
  double score = 0;
};
/// Adds `terms` (one atomic script call). Throws Error(kUsage) for an empty term or one
/// holding a NUL byte, Error(kServer) when the keys hold something else.
std::vector<Added> add(Connection& conn, const Keys& keys, std::string_view index,
                       const std::vector<std::string>& terms, const AddOptions& opts);

struct Removed {
  std::string term;
  bool removed = false;  ///< false: the term was not in the index
};
std::vector<Removed> remove(Connection& conn, const Keys& keys, std::string_view index,
                            const std::vector<std::string>& terms);

struct Suggestion {
  std::string term;
  double score = 0;
};
struct Suggestions {
  std::string index;
  std::string prefix;
  bool scored = false;
  std::vector<Suggestion> terms;
};
/// Up to `limit` terms that start with `prefix` ignoring case: in lexicographic order of
/// their folded form, or when the index has scores, highest score first (ties in that order).
Suggestions suggest(Connection& conn, const Keys& keys, std::string_view index,
                    std::string_view prefix, std::size_t limit);

struct Pushed {
  std::string list;
  std::string item;
  std::int64_t length = 0;
};
/// Puts `item` first in `list`, removing an earlier copy, keeping at most `max` items. With
/// `expire` above 0 the list ends that long after the push; 0 keeps the expiry it has.
Pushed recent_push(Connection& conn, const Keys& keys, std::string_view list, std::string_view item,
                   std::size_t max, Millis expire = Millis{0});

/// The items of `list`, most recent first, that start with `prefix` ignoring case.
Suggestions recent_suggest(Connection& conn, const Keys& keys, std::string_view list,
                           std::string_view prefix, std::size_t limit);

// Pure decoders of the server's replies (no I/O), for tests and fuzzing. All throw
// Error(kServer) for a reply of another shape; `key` names the index in errors.
std::vector<Added> decode_add(const redisReply* r, const std::vector<std::string>& terms);
std::vector<Removed> decode_remove(const redisReply* r, const std::vector<std::string>& terms);
/// complete_suggest's reply into s.scored and s.terms.
void decode_suggest(const redisReply* r, const std::string& key, Suggestions& s);
/// TYPE and LRANGE of a recent list into s.terms: up to `limit` items matching `prefix`.
void decode_recent(const Reply& type, const Reply& items, const std::string& key,
                   std::string_view prefix, std::size_t limit, Suggestions& s);

}  // namespace rcoord::complete
