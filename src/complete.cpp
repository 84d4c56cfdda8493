#include "complete.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "casefold.hpp"
#include "errors.hpp"
#include "lua_scripts.hpp"
#include "script.hpp"

namespace rcoord::complete {
namespace {

constexpr std::string_view kType = "complete";
constexpr std::string_view kRecentType = "recent";

void check_term(std::string_view term) {
  if (term.empty()) throw Error(kUsage, "empty term", "give terms of at least one character");
  if (term.find('\0') != std::string_view::npos) {
    throw Error(kUsage, "a term holds a NUL byte", "terms are text; remove the NUL bytes");
  }
}

void check_limit(std::size_t limit) {
  if (limit < 1) throw Error(kUsage, "--limit must be at least 1", "use e.g. --limit 10");
}

Args index_keys(const Keys& keys, std::string_view index) {
  check_name("complete index", index);
  return {keys.object(kType, index), keys.aux(kType, index, "scores")};
}

double parse_score(const redisReply* r) {
  std::string s = reply_string(r);
  return std::strtod(s.c_str(), nullptr);
}

// `folded \0 term` back to the term; a member without the NUL was not written by rcoord.
std::string term_of(const std::string& member, const std::string& key) {
  auto nul = member.find('\0');
  if (nul == std::string::npos) {
    throw foreign_key_error(key, "a member that is not an rcoord autocomplete term");
  }
  return member.substr(nul + 1);
}

}  // namespace

std::string lex_upper_bound(std::string_view prefix) {
  std::string high(prefix);
  while (!high.empty() && static_cast<unsigned char>(high.back()) == 0xFF) high.pop_back();
  if (high.empty()) return "+";
  high.back() = static_cast<char>(static_cast<unsigned char>(high.back()) + 1);
  return "(" + high;
}

std::string member_of(std::string_view term) {
  std::string m = fold_case(term);
  m += '\0';
  m += term;
  return m;
}

std::vector<Added> add(Connection& conn, const Keys& keys, std::string_view index,
                       const std::vector<std::string>& terms, const AddOptions& opts) {
  Args ks = index_keys(keys, index);
  if (terms.empty()) return {};
  Args args;
  if (opts.incr) {
    args = {"incr", fmt::format("{}", opts.score.value_or(1.0))};
  } else if (opts.score) {
    args = {"set", fmt::format("{}", *opts.score)};
  } else {
    args = {"plain", "0"};
  }
  args.push_back(std::to_string(opts.expire.count()));
  for (const auto& t : terms) {
    check_term(t);
    args.push_back(member_of(t));
  }
  Reply r = eval(conn, lua::kCompleteAdd, ks, args);
  return decode_add(r.get(), terms);
}

std::vector<Removed> remove(Connection& conn, const Keys& keys, std::string_view index,
                            const std::vector<std::string>& terms) {
  Args ks = index_keys(keys, index);
  if (terms.empty()) return {};
  Args args;
  for (const auto& t : terms) {
    check_term(t);
    args.push_back(member_of(t));
  }
  Reply r = eval(conn, lua::kCompleteRemove, ks, args);
  return decode_remove(r.get(), terms);
}

Suggestions suggest(Connection& conn, const Keys& keys, std::string_view index,
                    std::string_view prefix, std::size_t limit) {
  check_limit(limit);
  Args ks = index_keys(keys, index);
  Suggestions s;
  s.index = std::string(index);
  s.prefix = std::string(prefix);
  std::string folded = fold_case(prefix);
  Reply r = eval(conn, lua::kCompleteSuggest, ks,
                 {folded, std::to_string(limit), lex_upper_bound(folded)});
  decode_suggest(r.get(), ks[0], s);
  return s;
}

Pushed recent_push(Connection& conn, const Keys& keys, std::string_view list, std::string_view item,
                   std::size_t max, Millis expire) {
  check_name("recent list", list);
  if (max < 1) throw Error(kUsage, "--max must be at least 1", "use e.g. --max 100");
  Pushed p;
  p.list = std::string(list);
  p.item = std::string(item);
  Reply r = eval(conn, lua::kCompleteRecentPush, {keys.object(kRecentType, list)},
                 {std::string(item), std::to_string(max), std::to_string(expire.count())});
  p.length = reply_integer(r.get());
  return p;
}

Suggestions recent_suggest(Connection& conn, const Keys& keys, std::string_view list,
                           std::string_view prefix, std::size_t limit) {
  check_name("recent list", list);
  check_limit(limit);
  std::string key = keys.object(kRecentType, list);
  auto replies = conn.pipeline({{"TYPE", key}, {"LRANGE", key, "0", "-1"}});
  Suggestions s;
  s.index = std::string(list);
  s.prefix = std::string(prefix);
  decode_recent(replies[0], replies[1], key, prefix, limit, s);
  return s;
}

std::vector<Added> decode_add(const redisReply* r, const std::vector<std::string>& terms) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 * terms.size()) {
    throw Error(kServer, "unexpected reply from the complete_add script");
  }
  std::vector<Added> out;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    Added a;
    a.term = terms[i];
    a.added = reply_integer(r->element[2 * i]) == 1;
    std::string s = reply_string(r->element[2 * i + 1]);
    a.scored = !s.empty();
    if (a.scored) a.score = std::strtod(s.c_str(), nullptr);
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<Removed> decode_remove(const redisReply* r, const std::vector<std::string>& terms) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements != terms.size()) {
    throw Error(kServer, "unexpected reply from the complete_remove script");
  }
  std::vector<Removed> out;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    out.push_back({terms[i], reply_integer(r->element[i]) == 1});
  }
  return out;
}

void decode_suggest(const redisReply* r, const std::string& key, Suggestions& s) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 || r->elements % 2 != 1) {
    throw Error(kServer, "unexpected reply from the complete_suggest script");
  }
  s.scored = reply_integer(r->element[0]) == 1;
  for (std::size_t i = 1; i + 1 < r->elements; i += 2) {
    s.terms.push_back({term_of(reply_string(r->element[i]), key), parse_score(r->element[i + 1])});
  }
}

void decode_recent(const Reply& type, const Reply& items, const std::string& key,
                   std::string_view prefix, std::size_t limit, Suggestions& s) {
  std::string kind = reply_string(type.get());
  if (kind == "none") return;
  if (kind != "list") {
    throw foreign_key_error(key, fmt::format("a {} that is not an rcoord recent list", kind));
  }
  check_reply(items, "LRANGE " + key);
  std::string folded = fold_case(prefix);
  for (std::size_t i = 0; i < items->elements && s.terms.size() < limit; ++i) {
    std::string item = reply_string(items->element[i]);
    if (fold_case(item).compare(0, folded.size(), folded) == 0) s.terms.push_back({item, 0});
  }
}

}  // namespace rcoord::complete
