#include "complete_command.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "bulk_output.hpp"
#include "errors.hpp"
#include "items.hpp"
#include "text.hpp"

namespace rcoord::complete {

nlohmann::ordered_json score_json(double score) {
  if (std::isfinite(score) && std::trunc(score) == score && std::fabs(score) < 9e15) {
    return static_cast<std::int64_t>(score);
  }
  return score;
}

// `FIELD`, and `FIELD_base64` with the exact bytes when JSON cannot show them (not UTF-8).
void put_text(nlohmann::ordered_json& j, const std::string& field, const std::string& text) {
  j[field] = text;
  if (!valid_utf8(text)) j[field + "_base64"] = base64(text);
}

void to_json(nlohmann::ordered_json& j, const Added& r) {
  j = nlohmann::ordered_json::object();
  put_text(j, "term", r.term);
  j["added"] = r.added;
  if (r.scored) j["score"] = score_json(r.score);
}
void to_json(nlohmann::ordered_json& j, const Removed& r) {
  j = nlohmann::ordered_json::object();
  put_text(j, "term", r.term);
  j["removed"] = r.removed;
}
void to_json(nlohmann::ordered_json& j, const Suggestion& r) {
  j = nlohmann::ordered_json::object();
  put_text(j, "term", r.term);
  j["score"] = score_json(r.score);
}
void to_json(nlohmann::ordered_json& j, const Pushed& r) {
  j = {{"name", r.list}, {"list", r.list}};  // list: the name's old field (deprecated)
  put_text(j, "item", r.item);
  j["length"] = r.length;
}
std::string to_text(const Pushed& r) { return std::to_string(r.length); }

void to_json(nlohmann::ordered_json& j, const AddSummary& r) {
  // index: the name's old field, kept one release (deprecated)
  j = {{"name", r.index}, {"index", r.index}, {"terms", r.terms}, {"added", r.added}};
}
std::string to_text(const AddSummary& r) {
  return fmt::format("index: {}\nterms: {}\nadded: {}\n", escape_text(r.index), r.terms, r.added);
}

}  // namespace rcoord::complete

namespace rcoord::cmd {
namespace {

struct CompleteArgs {
  std::string index;
  std::string prefix;
  std::string item;
  std::vector<std::string> terms;
  bool nul = false;
  bool summary = false;
  std::optional<double> score;
  bool incr = false;
  std::size_t limit = 10;
  std::size_t max = 100;
  Millis expire{0};  // 0: not given
};

int run_add(Context& ctx, const CompleteArgs& a) {
  if (a.score && !std::isfinite(*a.score)) {
    throw Error(kUsage, fmt::format("bad --score '{}'", *a.score), "use a finite number");
  }
  complete::AddOptions opts{a.score, a.incr, a.expire};
  complete::AddSummary sum;
  sum.index = a.index;
  for_each_batch(ItemSource{a.terms, a.nul}, complete::kBatchSize,
                 [&](const std::vector<std::string>& batch) {
                   auto results = complete::add(ctx.conn(), ctx.keys(), a.index, batch, opts);
                   for (const auto& r : results) {
                     ++sum.terms;
                     if (r.added) ++sum.added;
                   }
                   print_items(
                       ctx, a.summary, results,
                       [&a](nlohmann::ordered_json& j, const complete::Added& r) {
                         to_json(j, r);
                         name_first(j, a.index);
                       },
                       [](const complete::Added& r) -> std::optional<std::string> {
                         if (r.added) return r.term;
                         return std::nullopt;
                       });
                 });
  if (a.summary) ctx.out().emit(sum);
  return kYes;
}

int run_remove(Context& ctx, const CompleteArgs& a) {
  std::uint64_t missing = 0;
  for_each_batch(ItemSource{a.terms, a.nul}, complete::kBatchSize,
                 [&](const std::vector<std::string>& batch) {
                   auto results = complete::remove(ctx.conn(), ctx.keys(), a.index, batch);
                   for (const auto& r : results) missing += r.removed ? 0 : 1;
                   print_items(
                       ctx, false, results,
                       [&a](nlohmann::ordered_json& j, const complete::Removed& r) {
                         to_json(j, r);
                         name_first(j, a.index);
                       },
                       [](const complete::Removed& r) -> std::optional<std::string> {
                         if (r.removed) return r.term;
                         return std::nullopt;
                       });
                 });
  if (missing > 0) {
    ctx.out().note(fmt::format("rcoord: {} term(s) were not in index '{}'", missing, a.index));
  }
  return missing > 0 ? kNo : kYes;
}

void print_suggestions(Context& ctx, const std::string& name, const complete::Suggestions& s,
                       bool items) {
  print_items(
      ctx, false, s.terms,
      [items, &name](nlohmann::ordered_json& j, const complete::Suggestion& r) {
        if (items) {
          j = nlohmann::ordered_json::object();
          complete::put_text(j, "item", r.term);
        } else {
          to_json(j, r);
        }
        name_first(j, name);
      },
      [](const complete::Suggestion& r) -> std::optional<std::string> { return r.term; });
  if (s.terms.empty()) ctx.out().note(fmt::format("rcoord: nothing starts with '{}'", s.prefix));
}

int run_suggest(Context& ctx, const CompleteArgs& a) {
  auto s = complete::suggest(ctx.conn(), ctx.keys(), a.index, a.prefix, a.limit);
  print_suggestions(ctx, a.index, s, false);
  return s.terms.empty() ? kNo : kYes;
}

int run_recent_push(Context& ctx, const CompleteArgs& a) {
  ctx.out().emit(complete::recent_push(ctx.conn(), ctx.keys(), a.index, a.item, a.max, a.expire));
  return kYes;
}

int run_recent_suggest(Context& ctx, const CompleteArgs& a) {
  auto s = complete::recent_suggest(ctx.conn(), ctx.keys(), a.index, a.prefix, a.limit);
  print_suggestions(ctx, a.index, s, true);
  return s.terms.empty() ? kNo : kYes;
}

CLI::Option* add_limit(CLI::App* verb, std::size_t& limit) {
  return verb->add_option("--limit", limit, "At most N suggestions (default 10)")
      ->type_name("N")
      ->transform(decimal_in(1, 100000));
}

}  // namespace

void add_complete(CLI::App& app, Context& ctx) {
  auto* complete = app.add_subcommand("complete", "Autocomplete: prefix search and recent items");
  complete->require_subcommand(1);
  complete->footer(
      "Examples:\n"
      "  cut -d, -f1 cities.csv | rcoord complete add cities\n"
      "  rcoord complete suggest cities zü --limit 5\n"
      "  rcoord complete recent push contacts:alice bob@example.com");

  auto add = std::make_shared<CompleteArgs>();
  auto* a = complete->add_subcommand("add", "Add terms; print the ones that were new");
  a->add_option("index", add->index, "Index name")->required();
  a->add_option("terms", add->terms, "Terms to add (none or -: one per line on stdin)");
  a->add_flag("-0,--null", add->nul, "Stdin terms end with a NUL byte instead of a newline");
  a->add_option("--score", add->score, "Set the terms' score (with --incr: add it)")
      ->type_name("S")
      ->check(kDecimalReal);
  a->add_flag("--incr", add->incr, "Add 1 (or --score S) to the terms' score");
  a->add_flag("--summary", add->summary, "Print only the totals at the end");
  add_expire_option(a, add->expire, "the index");
  a->footer(
      "Example: cut -d, -f1 cities.csv | rcoord complete add cities --summary\n"
      "         rcoord complete add searches \"$QUERY\" --incr\n"
      "         rcoord complete add \"searches:$(date +%F)\" \"$QUERY\" --incr --expire 48h");
  on_parse(a, ctx, add, run_add);

  auto sug = std::make_shared<CompleteArgs>();
  auto* s = complete->add_subcommand("suggest", "Terms that start with PREFIX, ignoring case");
  s->add_option("index", sug->index, "Index name")->required();
  s->add_option("prefix", sug->prefix, "What was typed so far")->required();
  add_limit(s, sug->limit);
  s->footer("Example: rcoord complete suggest cities zü --limit 5");
  on_parse(s, ctx, sug, run_suggest);

  auto rem = std::make_shared<CompleteArgs>();
  auto* r = complete->add_subcommand("remove", "Remove terms (exactly as they were added)");
  r->add_option("index", rem->index, "Index name")->required();
  r->add_option("terms", rem->terms, "Terms to remove (-: one per line on stdin)")->required();
  r->add_flag("-0,--null", rem->nul, "Stdin terms end with a NUL byte instead of a newline");
  r->footer("Example: rcoord complete remove cities Zürich");
  on_parse(r, ctx, rem, run_remove);

  auto* recent = complete->add_subcommand("recent", "Most-recent-first lists without duplicates");
  recent->require_subcommand(1);
  recent->footer(
      "Examples:\n"
      "  rcoord complete recent push contacts:alice bob@example.com\n"
      "  rcoord complete recent suggest contacts:alice b");

  auto push = std::make_shared<CompleteArgs>();
  auto* p = recent->add_subcommand("push", "Put ITEM first in LIST; print the list's length");
  p->add_option("list", push->index, "List name")->required();
  p->add_option("item", push->item, "The item")->required();
  p->add_option("--max", push->max, "Keep at most N items (default 100)")
      ->type_name("N")
      ->transform(decimal_in(1, 1000000));
  add_expire_option(p, push->expire, "the list");
  p->footer(
      "Example: rcoord complete recent push contacts:alice bob@example.com\n"
      "         rcoord complete recent push \"viewed:$USER\" \"$PAGE\" --expire 720h");
  on_parse(p, ctx, push, run_recent_push);

  auto rsug = std::make_shared<CompleteArgs>();
  auto* rs =
      recent->add_subcommand("suggest", "Items of LIST that start with PREFIX, newest first");
  rs->add_option("list", rsug->index, "List name")->required();
  rs->add_option("prefix", rsug->prefix, "What was typed so far")->required();
  add_limit(rs, rsug->limit);
  rs->footer("Example: rcoord complete recent suggest contacts:alice b");
  on_parse(rs, ctx, rsug, run_recent_suggest);
}

}  // namespace rcoord::cmd
