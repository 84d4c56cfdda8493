#include "bloom_command.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "bulk_output.hpp"
#include "errors.hpp"
#include "items.hpp"
#include "text.hpp"
#include "watch.hpp"

namespace rcoord::bloom {
namespace {

double round6(double x) { return std::round(x * 1e6) / 1e6; }

}  // namespace

void to_json(nlohmann::ordered_json& j, const Reserved& r) {
  j = {{"reserved", r.reserved}, {"name", r.name},
       {"capacity", r.capacity}, {"error_rate", r.error_rate},
       {"bits", r.bits},         {"hashes", r.hashes},
       {"bytes", r.bytes}};
}
std::string to_text(const Reserved& r) {
  return fmt::format(
      "reserved: {}\nname: {}\ncapacity: {}\nerror_rate: {}\nbits: {}\nhashes: {}\nbytes: {}\n",
      r.reserved, escape_text(r.name), r.capacity, r.error_rate, r.bits, r.hashes, r.bytes);
}

void to_json(nlohmann::ordered_json& j, const Info& r) {
  j = {{"exists", r.exists},
       {"name", r.name},
       {"capacity", r.capacity},
       {"error_rate", r.error_rate},
       {"items", r.items},
       {"layers", r.layers},
       {"bits", r.bits},
       {"hashes", r.hashes},
       {"bytes", r.bytes},
       {"fill_ratio", round6(r.fill_ratio)},
       {"expansion", r.expansion},
       {"nonscaling", r.nonscaling},
       {"estimated_error_rate", round6(r.estimated_error_rate)}};
  if (r.expires_in_ms >= 0) j["expires_in_ms"] = r.expires_in_ms;
}
std::string to_text(const Info& r) {
  if (!r.exists) return {};
  std::string text = fmt::format(
      "exists: {}\nname: {}\ncapacity: {}\nerror_rate: {}\nitems: {}\nlayers: {}\nbits: {}\n"
      "hashes: {}\nbytes: {}\nfill_ratio: {}\nexpansion: {}\nnonscaling: {}\n"
      "estimated_error_rate: {}\n",
      r.exists, escape_text(r.name), r.capacity, r.error_rate, r.items, r.layers, r.bits, r.hashes,
      r.bytes, round6(r.fill_ratio), r.expansion, r.nonscaling, round6(r.estimated_error_rate));
  if (r.expires_in_ms >= 0) text += fmt::format("expires_in_ms: {}\n", r.expires_in_ms);
  return text;
}

namespace {

// `item`, and `item_base64` with the exact bytes when JSON cannot show them (not UTF-8).
nlohmann::ordered_json item_json(const std::string& item) {
  nlohmann::ordered_json j = {{"item", item}};
  if (!valid_utf8(item)) j["item_base64"] = base64(item);
  return j;
}

}  // namespace

void added_json(nlohmann::ordered_json& j, const ItemResult& r) {
  j = item_json(r.item);
  j["added"] = r.yes;
  if (r.full) j["full"] = true;
}
void present_json(nlohmann::ordered_json& j, const ItemResult& r) {
  j = item_json(r.item);
  j["present"] = r.yes;
}

void to_json(nlohmann::ordered_json& j, const AddSummary& r) {
  j = {{"name", r.name},
       {"items", r.items},
       {"added", r.added},
       {"present", r.present},
       {"refused", r.refused}};
}
std::string to_text(const AddSummary& r) {
  return fmt::format("name: {}\nitems: {}\nadded: {}\npresent: {}\nrefused: {}\n",
                     escape_text(r.name), r.items, r.added, r.present, r.refused);
}

void to_json(nlohmann::ordered_json& j, const TestSummary& r) {
  j = {{"name", r.name}, {"items", r.items}, {"present", r.present}, {"absent", r.absent}};
}
std::string to_text(const TestSummary& r) {
  return fmt::format("name: {}\nitems: {}\npresent: {}\nabsent: {}\n", escape_text(r.name), r.items,
                     r.present, r.absent);
}

}  // namespace rcoord::bloom

namespace rcoord::pf {

void to_json(nlohmann::ordered_json& j, const Added& r) {
  // key: the name's old field, kept one release (deprecated)
  j = {{"name", r.key}, {"key", r.key}, {"items", r.items}, {"changed", r.changed}};
}
std::string to_text(const Added& r) {
  return fmt::format("key: {}\nitems: {}\nchanged: {}\n", escape_text(r.key), r.items, r.changed);
}

void to_json(nlohmann::ordered_json& j, const Count& r) {
  // names: the HyperLogLogs counted (name as well when there is one); keys: deprecated
  j = nlohmann::ordered_json::object();
  if (r.keys.size() == 1) j["name"] = r.keys.front();
  j["names"] = r.keys;
  j["keys"] = r.keys;
  j["count"] = r.count;
}
std::string to_text(const Count& r) { return std::to_string(r.count); }

void to_json(nlohmann::ordered_json& j, const Merged& r) {
  // name: the one written to, sources: the ones merged; dest and keys: deprecated
  j = {{"name", r.dest},
       {"sources", r.keys},
       {"dest", r.dest},
       {"keys", r.keys},
       {"count", r.count}};
}
std::string to_text(const Merged& r) { return std::to_string(r.count); }

}  // namespace rcoord::pf

namespace rcoord::cmd {
namespace {

struct BloomArgs {
  std::string name;
  std::vector<std::string> items;
  bool nul = false;
  bool summary = false;
  std::uint64_t capacity = 0;
  double error_rate = 0;
  std::uint32_t expansion = bloom::kDefaultExpansion;
  bool nonscaling = false;
  std::optional<Millis> watch;
  Millis expire{0};  // 0: not given
};

std::string quote_item(const std::string& item) {
  return item.size() > 60 ? "'" + item.substr(0, 57) + "...'" : "'" + item + "'";
}

int run_reserve(Context& ctx, const BloomArgs& a) {
  bloom::ReserveOptions opts{a.capacity, a.error_rate, a.expansion, a.nonscaling, a.expire};
  auto r = bloom::reserve(ctx.conn(), ctx.keys(), a.name, opts);
  ctx.out().emit(r);
  if (!r.reserved) ctx.out().note(fmt::format("rcoord: bloom filter '{}' exists already", a.name));
  return r.reserved ? kYes : kNo;
}

// Why items were refused: a nonscaling filter is full at its capacity; a scalable one when it
// may not grow another layer.
void note_full(Context& ctx, const std::string& name, const bloom::Meta& m, std::uint64_t refused) {
  std::string why;
  std::string hint = "reserve a new filter with a larger --capacity or --expansion";
  if (m.expansion == 0) {
    why = "it is --nonscaling";
    hint = "reserve a larger filter, or one without --nonscaling";
  } else if (m.layers.size() >= bloom::kMaxLayers) {
    why = fmt::format("it has {} layers, the most a filter may have", m.layers.size());
  } else {
    why = "its next layer would pass 2^32 bits, the most one Redis string holds";
  }
  ctx.out().note(fmt::format("rcoord: bloom filter '{}' is full ({}): {} item(s) refused ({})",
                             name, why, refused, hint));
}

// One batch of `bloom add` or `bloom test` as it is printed: in JSON every item with its
// answer (`to_json`), in text the items answered yes, one per line.
void print_bloom_items(Context& ctx, const BloomArgs& a,
                       const std::vector<bloom::ItemResult>& results,
                       void (*to_json)(nlohmann::ordered_json&, const bloom::ItemResult&)) {
  print_items(
      ctx, a.summary, results,
      [&a, to_json](nlohmann::ordered_json& j, const bloom::ItemResult& r) {
        to_json(j, r);
        name_first(j, a.name);
      },
      [](const bloom::ItemResult& r) -> std::optional<std::string> {
        if (r.yes) return r.item;
        return std::nullopt;
      });
}

int run_add(Context& ctx, const BloomArgs& a) {
  bloom::Adder adder(ctx.conn(), ctx.keys(), a.name, a.expire);
  bloom::AddSummary sum;
  sum.name = a.name;
  auto account = [&](const std::vector<bloom::ItemResult>& results) {
    for (const auto& r : results) {
      ++sum.items;
      if (r.yes) {
        ++sum.added;
      } else if (r.full) {
        ++sum.refused;
      } else {
        ++sum.present;
      }
    }
    print_bloom_items(ctx, a, results, bloom::added_json);
  };
  for_each_batch(ItemSource{a.items, a.nul}, bloom::kBatchSize,
                 [&](const std::vector<std::string>& batch) { account(adder.add(batch)); });
  account(adder.finish());
  if (a.summary) ctx.out().emit(sum);
  if (sum.refused > 0) note_full(ctx, a.name, adder.meta(), sum.refused);
  return sum.refused > 0 ? kNo : kYes;
}

int run_test(Context& ctx, const BloomArgs& a) {
  bloom::Tester tester(ctx.conn(), ctx.keys(), a.name);
  bloom::TestSummary sum;
  sum.name = a.name;
  std::string first_absent;
  auto account = [&](const std::vector<bloom::ItemResult>& results) {
    for (const auto& r : results) {
      ++sum.items;
      if (r.yes) {
        ++sum.present;
      } else {
        if (sum.absent == 0) first_absent = r.item;
        ++sum.absent;
      }
    }
    print_bloom_items(ctx, a, results, bloom::present_json);
  };
  for_each_batch(ItemSource{a.items, a.nul}, bloom::kBatchSize,
                 [&](const std::vector<std::string>& batch) { account(tester.test(batch)); });
  account(tester.finish());
  if (a.summary) ctx.out().emit(sum);
  if (sum.absent == 1) {
    ctx.out().note(
        fmt::format("rcoord: {} is not in bloom filter '{}'", quote_item(first_absent), a.name));
  } else if (sum.absent > 1) {
    ctx.out().note(fmt::format("rcoord: {} of {} items are not in bloom filter '{}'", sum.absent,
                               sum.items, a.name));
  }
  return sum.absent > 0 ? kNo : kYes;
}

int run_info(Context& ctx, const BloomArgs& a) {
  return run_watched(ctx, a.watch, [&] {
    auto r = bloom::info(ctx.conn(), ctx.keys(), a.name);
    ctx.out().emit(r);
    if (!r.exists) ctx.out().note(fmt::format("rcoord: no bloom filter '{}'", a.name));
    return r.exists ? kYes : kNo;
  });
}

void add_stdin_options(CLI::App* verb, std::vector<std::string>& items, bool& nul,
                       const std::string& what) {
  verb->add_option("items", items, what + " (none or -: one per line on stdin)");
  verb->add_flag("-0,--null", nul, "Stdin items end with a NUL byte instead of a newline");
}

// --- pf ------------------------------------------------------------------------------------

struct PfArgs {
  std::string key;
  std::vector<std::string> items;
  std::vector<std::string> keys;
  bool nul = false;
  Millis expire{0};  // 0: not given
};

int run_pf_add(Context& ctx, const PfArgs& a) {
  pf::Adder adder(ctx.conn(), ctx.keys(), a.key, a.expire);
  for_each_batch(ItemSource{a.items, a.nul}, pf::kBatchSize,
                 [&](const std::vector<std::string>& batch) { adder.add(batch); });
  ctx.out().emit(adder.finish());
  return kYes;
}

int run_pf_count(Context& ctx, const PfArgs& a) {
  ctx.out().emit(pf::count(ctx.conn(), ctx.keys(), a.keys));
  return kYes;
}

int run_pf_merge(Context& ctx, const PfArgs& a) {
  ctx.out().emit(pf::merge(ctx.conn(), ctx.keys(), a.key, a.keys, a.expire));
  return kYes;
}

}  // namespace

void add_bloom(CLI::App& app, Context& ctx) {
  auto* bloom = app.add_subcommand("bloom", "Scalable Bloom filters: add and test items");
  bloom->require_subcommand(1);
  bloom->footer(
      "Examples:\n"
      "  rcoord bloom reserve crawled --capacity 10000000 --error-rate 0.001\n"
      "  ./list-urls | rcoord bloom add crawled | xargs -n1 ./fetch   # only the new ones\n"
      "  rcoord bloom test crawled https://example.com/ && echo 'seen (probably)'");

  auto res = std::make_shared<BloomArgs>();
  auto* r = bloom->add_subcommand("reserve", "Create a filter sized for N items at error rate P");
  r->add_option("name", res->name, "Filter name")->required();
  r->add_option("--capacity", res->capacity, "Items the first layer holds at the error rate")
      ->type_name("N")
      ->required()
      ->transform(decimal_in(1, std::int64_t{1} << 40));
  r->add_option("--error-rate", res->error_rate, "False-positive rate, e.g. 0.01 for 1%")
      ->type_name("P")
      ->required()
      ->check(kDecimalReal);
  auto* exp = r->add_option("--expansion", res->expansion,
                            "When full, add a layer this many times larger (default 2)")
                  ->type_name("N")
                  ->transform(decimal_in(1, 1000));
  r->add_flag("--nonscaling", res->nonscaling, "Never add a layer: refuse new items when full")
      ->excludes(exp);
  add_expire_option(r, res->expire, "the filter (every layer, added later too)");
  r->footer(
      "Example: rcoord bloom reserve crawled --capacity 10000000 --error-rate 0.001\n"
      "         rcoord bloom reserve \"seen:$(date +%F)\" --capacity 1000000 --error-rate 0.01 "
      "--expire 48h\n"
      "A filter that exists already is left as it is (exit 1), its expiry included.");
  on_parse(r, ctx, res, run_reserve);

  auto add = std::make_shared<BloomArgs>();
  auto* a = bloom->add_subcommand("add", "Add items; print the ones that were new");
  a->add_option("name", add->name,
                "Filter name (created with capacity 10000, error rate 0.01 "
                "when missing)")
      ->required();
  add_stdin_options(a, add->items, add->nul, "Items to add");
  a->add_flag("--summary", add->summary, "Print only the totals at the end");
  add_expire_option(a, add->expire, "the filter (every layer)");
  a->footer(
      "Example: zcat urls.gz | rcoord bloom add crawled --summary\n"
      "         ./list-ids | rcoord bloom add \"seen:$(date +%F)\" --expire 48h\n"
      "Text output lists the items that were not in the filter yet, so it works as a filter:\n"
      "  ./list-urls | rcoord bloom add crawled | xargs -n1 ./fetch");
  on_parse(a, ctx, add, run_add);

  auto tst = std::make_shared<BloomArgs>();
  auto* t = bloom->add_subcommand("test", "Test items; exit 1 if any is definitely absent");
  t->add_option("name", tst->name, "Filter name")->required();
  add_stdin_options(t, tst->items, tst->nul, "Items to test");
  t->add_flag("--summary", tst->summary, "Print only the totals at the end");
  t->footer(
      "Example: rcoord bloom test crawled https://example.com/ && echo 'seen (probably)'\n"
      "Text output lists the items that may be present.");
  on_parse(t, ctx, tst, run_test);

  auto inf = std::make_shared<BloomArgs>();
  auto* i = bloom->add_subcommand("info", "Show size, items, layers and the real fill ratio");
  i->add_option("name", inf->name, "Filter name")->required();
  add_watch_option(i, inf->watch);
  i->footer("Example: rcoord bloom info crawled --json");
  on_parse(i, ctx, inf, run_info);
}

void add_pf(CLI::App& app, Context& ctx) {
  auto* pf = app.add_subcommand("pf", "HyperLogLog: count distinct items in 12 KiB");
  pf->require_subcommand(1);
  pf->footer(
      "Examples:\n"
      "  zcat access.log.gz | cut -d' ' -f1 | rcoord pf add visitors-mon\n"
      "  rcoord pf count visitors-mon visitors-tue   # distinct visitors over both days\n"
      "  rcoord pf add \"visitors:$(date +%F)\" \"$IP\" --expire 768h   # a key a day, gone in 32 "
      "days");

  auto add = std::make_shared<PfArgs>();
  auto* a = pf->add_subcommand("add", "Add items; print whether the estimate changed");
  a->add_option("key", add->key, "HyperLogLog name")->required();
  add_stdin_options(a, add->items, add->nul, "Items to add");
  add_expire_option(a, add->expire, "the HyperLogLog");
  a->footer(
      "Example: zcat access.log.gz | cut -d' ' -f1 | rcoord pf add visitors-today\n"
      "         rcoord pf add \"visitors:$(date +%F)\" \"$IP\" --expire 768h");
  on_parse(a, ctx, add, run_pf_add);

  auto cnt = std::make_shared<PfArgs>();
  auto* c = pf->add_subcommand("count", "Estimate the distinct items of the union of KEYs");
  c->add_option("keys", cnt->keys, "HyperLogLog names")->required();
  c->footer("Example: rcoord pf count visitors-mon visitors-tue");
  on_parse(c, ctx, cnt, run_pf_count);

  auto mrg = std::make_shared<PfArgs>();
  auto* m = pf->add_subcommand("merge", "Merge KEYs into DEST (DEST's own items stay)");
  m->add_option("dest", mrg->key, "Destination HyperLogLog")->required();
  m->add_option("keys", mrg->keys, "Source HyperLogLogs")->required();
  add_expire_option(m, mrg->expire, "DEST");
  m->footer(
      "Example: rcoord pf merge visitors-week visitors-mon visitors-tue\n"
      "         rcoord pf merge \"visitors:week-$(date +%V)\" visitors:2026-11-23 "
      "visitors:2026-11-24 "
      "--expire 2160h");
  on_parse(m, ctx, mrg, run_pf_merge);
}

}  // namespace rcoord::cmd
