#include "metrics_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <optional>

#include "atomic_file.hpp"
#include "identity.hpp"
#include "ops_command.hpp"
#include "text.hpp"

namespace rcoord::cmd {
namespace {

struct Metric {
  std::string_view name;
  std::string_view help;
};

// Every metric `rcoord metrics` exports about objects (SPEC §5, with the names of §6), all
// gauges, in the order they are printed. The names follow Prometheus' conventions, which
// `promtool check metrics` enforces: a unit as the suffix (seconds, ratio), and none of the
// suffixes the format keeps for counters and summaries (_total, _count, _sum, _bucket).
constexpr Metric kMetrics[] = {
    {"rcoord_lock_held", "1 when the lock is held (by a writer or by readers), 0 when it is free"},
    {"rcoord_lock_held_seconds",
     "Seconds since the lock's writer took it (server clock); absent when it is free or shared"},
    {"rcoord_lock_fence", "The lock's fence: its holder's, or the last handed out when free"},
    {"rcoord_lock_waiting", "Writers and readers waiting for the lock"},
    {"rcoord_sem_permits_in_use", "Permits of the semaphore held by live holders"},
    {"rcoord_sem_limit", "The semaphore's limit, as its last taker gave it"},
    {"rcoord_sem_waiting", "Processes waiting for permits of the semaphore"},
    {"rcoord_queue_messages",
     "Messages of the queue by state: ready, delayed, in_flight (leased to a consumer), dead"},
    {"rcoord_limit_remaining", "What a request could still take from the rate limit now"},
    {"rcoord_elect_has_leader", "1 when the election has a leader, 0 when it has none"},
    {"rcoord_elect_term", "The election's term: its leader's, or the last one when it has none"},
    {"rcoord_bloom_items", "Items added to the Bloom filter"},
    {"rcoord_bloom_fill_ratio", "Share of the Bloom filter's bits that are set, all layers"},
    {"rcoord_pf_estimate", "Estimated distinct items of the HyperLogLog"},
    {"rcoord_latch_remaining", "Count left before the latch opens"},
};

// The types whose takes are counted (SPEC §6 contention you can see), each exported as three
// counters and a histogram, `rcoord_<type>_acquired_total` ... `rcoord_<type>_wait_seconds`.
struct Contended {
  std::string_view type;
  std::string_view noun;  ///< in the HELP lines
};
constexpr Contended kContended[] = {{"lock", "the lock"},
                                    {"sem", "permits of the semaphore"},
                                    {"elect", "the leadership"},
                                    {"gate", "every part of the gate"}};

// The two metrics of the scrape itself, before the objects' (SPEC §6).
constexpr Metric kUp = {
    "rcoord_up", "1 when rcoord read the server, 0 when it could not (no other figures then)"};
constexpr Metric kTimestamp = {"rcoord_scrape_timestamp_seconds",
                               "Unix time at which rcoord read these figures"};

std::size_t metric_index(std::string_view name) {
  const auto* it = std::find_if(std::begin(kMetrics), std::end(kMetrics),
                                [&](const Metric& m) { return m.name == name; });
  return static_cast<std::size_t>(it - std::begin(kMetrics));
}

// The name as the text format can carry it: UTF-8 as it is, any byte that is not part of a
// valid UTF-8 character written \xHH (the format has no way to carry such bytes).
std::string utf8_or_hex(std::string_view name) {
  if (valid_utf8(name)) return std::string(name);
  std::string out;
  for (std::size_t i = 0; i < name.size();) {
    auto lead = static_cast<unsigned char>(name[i]);
    std::size_t len = lead < 0x80           ? 1
                      : (lead >> 5) == 0x6  ? 2
                      : (lead >> 4) == 0xe  ? 3
                      : (lead >> 3) == 0x1e ? 4
                                            : 0;
    if (len > 0 && i + len <= name.size() && valid_utf8(name.substr(i, len))) {
      out.append(name.substr(i, len));
      i += len;
    } else {
      out += fmt::format("\\x{:02x}", lead);
      ++i;
    }
  }
  return out;
}

struct MetricsArgs {
  std::string pattern = "*";
  std::string type;
  std::optional<std::string> textfile;  ///< nullopt or "-": stdout
};

}  // namespace

std::string escape_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

Exposition::Exposition() : samples_(std::size(kMetrics)), counted_(std::size(kContended)) {}

bool Exposition::add(const inventory::Object& o) {
  std::string label = utf8_or_hex(o.name);
  if (!labels_.insert(o.type + '\0' + label).second) return false;
  for (const auto& g : o.gauges) {
    std::size_t i = metric_index(g.metric);
    if (i >= samples_.size()) continue;
    samples_[i].push_back({label, g.state, g.value});
  }
  if (o.contention) {
    for (std::size_t t = 0; t < std::size(kContended); ++t) {
      if (kContended[t].type == o.type) counted_[t].push_back({label, *o.contention});
    }
  }
  return true;
}

namespace {

void family_head(std::string& out, const Metric& m, std::string_view type = "gauge") {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", m.name, m.help, m.name, type);
}

// The counters of one contended type, in the order they are printed: name, HELP, and what
// each counts.
struct CounterFamily {
  std::string name;
  std::string help;
  std::int64_t inventory::Contention::*count;
};

std::vector<CounterFamily> counter_families(const Contended& c) {
  return {
      {fmt::format("rcoord_{}_acquired_total", c.type), fmt::format("Takes that got {}", c.noun),
       &inventory::Contention::acquired},
      {fmt::format("rcoord_{}_busy_total", c.type),
       fmt::format("Calls that found {} taken at their first try (they waited, or gave up)",
                   c.noun),
       &inventory::Contention::busy},
      {fmt::format("rcoord_{}_lost_total", c.type),
       fmt::format("Renewals that found their hold of {} gone (taken, broken, expired)", c.noun),
       &inventory::Contention::lost}};
}

std::string histogram_name(const Contended& c) {
  return fmt::format("rcoord_{}_wait_seconds", c.type);
}

std::string histogram_help(const Contended& c) {
  return fmt::format("How long the takes that got {} waited for it", c.noun);
}

// A bucket's upper bound as the `le` label: seconds, shortest form ("0.005", "60", "+Inf").
std::string bucket_label(std::size_t i) {
  if (i >= inventory::Contention::kBoundsMs.size()) return "+Inf";
  return fmt::format("{}", static_cast<double>(inventory::Contention::kBoundsMs[i]) / 1000);
}

// The cumulative counts of the histogram's buckets, as the format has them.
std::vector<std::int64_t> cumulative(const inventory::Contention& c) {
  std::vector<std::int64_t> out;
  std::int64_t sum = 0;
  for (auto n : c.waits) out.push_back(sum += n);
  return out;
}

// A value as JSON: an integer where it is one (a count, a fence), else a number.
nlohmann::ordered_json json_value(double v) {
  if (std::trunc(v) == v && std::fabs(v) < 9.0e15) {
    return static_cast<std::int64_t>(v);
  }
  return v;
}

nlohmann::ordered_json json_family(const Metric& m, nlohmann::ordered_json samples) {
  return {{"type", "gauge"}, {"help", m.help}, {"samples", std::move(samples)}};
}

}  // namespace

std::string Exposition::text(const Scrape& scrape) const {
  std::string out;
  family_head(out, kUp);
  out += fmt::format("{} {}\n", kUp.name, scrape.up ? 1 : 0);
  family_head(out, kTimestamp);
  out += fmt::format("{} {}\n", kTimestamp.name, scrape.timestamp_seconds);
  if (!scrape.up) return out;
  for (std::size_t i = 0; i < samples_.size(); ++i) {
    family_head(out, kMetrics[i]);
    for (const auto& s : samples_[i]) {
      out += kMetrics[i].name;
      out += "{name=\"";
      out += escape_label(s.name);
      if (!s.state.empty()) {
        out += "\",state=\"";
        out += s.state;
      }
      out += fmt::format("\"}} {}\n", s.value);
    }
  }
  for (std::size_t t = 0; t < std::size(kContended); ++t) contention_text(out, t);
  return out;
}

void Exposition::contention_text(std::string& out, std::size_t t) const {
  const Contended& c = kContended[t];
  for (const auto& f : counter_families(c)) {
    family_head(out, {f.name, f.help}, "counter");
    for (const auto& s : counted_[t]) {
      out += fmt::format("{}{{name=\"{}\"}} {}\n", f.name, escape_label(s.name),
                         s.contention.*f.count);
    }
  }
  std::string name = histogram_name(c);
  std::string help = histogram_help(c);
  family_head(out, {name, help}, "histogram");
  for (const auto& s : counted_[t]) {
    std::string label = escape_label(s.name);
    auto counts = cumulative(s.contention);
    for (std::size_t i = 0; i < counts.size(); ++i) {
      out += fmt::format("{}_bucket{{name=\"{}\",le=\"{}\"}} {}\n", name, label, bucket_label(i),
                         counts[i]);
    }
    out += fmt::format("{}_sum{{name=\"{}\"}} {}\n", name, label,
                       static_cast<double>(s.contention.wait_ms) / 1000);
    out += fmt::format("{}_count{{name=\"{}\"}} {}\n", name, label, counts.back());
  }
}

void Exposition::contention_json(nlohmann::ordered_json& metrics, std::size_t t) const {
  const Contended& c = kContended[t];
  for (const auto& f : counter_families(c)) {
    auto samples = nlohmann::ordered_json::array();
    for (const auto& s : counted_[t]) {
      samples.push_back({{"labels", {{"name", s.name}}}, {"value", s.contention.*f.count}});
    }
    metrics[f.name] = {{"type", "counter"}, {"help", f.help}, {"samples", std::move(samples)}};
  }
  auto samples = nlohmann::ordered_json::array();
  for (const auto& s : counted_[t]) {
    auto counts = cumulative(s.contention);
    nlohmann::ordered_json buckets = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < counts.size(); ++i) buckets[bucket_label(i)] = counts[i];
    samples.push_back({{"labels", {{"name", s.name}}},
                       {"buckets", std::move(buckets)},
                       {"sum", json_value(static_cast<double>(s.contention.wait_ms) / 1000)},
                       {"count", counts.back()}});
  }
  metrics[histogram_name(c)] = {
      {"type", "histogram"}, {"help", histogram_help(c)}, {"samples", std::move(samples)}};
}

nlohmann::ordered_json Exposition::json(const Scrape& scrape) const {
  auto ms = static_cast<std::int64_t>(std::llround(scrape.timestamp_seconds * 1000));
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  auto unlabelled = [](double v) {
    return nlohmann::ordered_json::array(
        {{{"labels", nlohmann::ordered_json::object()}, {"value", json_value(v)}}});
  };
  metrics[kUp.name] = json_family(kUp, unlabelled(scrape.up ? 1 : 0));
  metrics[kTimestamp.name] = json_family(kTimestamp, unlabelled(scrape.timestamp_seconds));
  if (scrape.up) {
    for (std::size_t i = 0; i < samples_.size(); ++i) {
      auto samples = nlohmann::ordered_json::array();
      for (const auto& s : samples_[i]) {
        nlohmann::ordered_json labels = {{"name", s.name}};
        if (!s.state.empty()) labels["state"] = s.state;
        samples.push_back({{"labels", std::move(labels)}, {"value", json_value(s.value)}});
      }
      metrics[kMetrics[i].name] = json_family(kMetrics[i], std::move(samples));
    }
    for (std::size_t t = 0; t < std::size(kContended); ++t) contention_json(metrics, t);
  }
  return {{"up", scrape.up ? 1 : 0}, {"scraped_at", rfc3339(ms)}, {"metrics", std::move(metrics)}};
}

namespace {

double unix_seconds_now() {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  return static_cast<double>(ms) / 1000;
}

// Reads the objects into `exposition`. A server that cannot be read (unreachable, refused
// the login or a command) leaves `scrape` down and its error in `failure`: the figures are
// then published as rcoord_up 0, so that a collector reading a textfile sees the failure
// instead of the last figures, and the error is told after.
std::optional<inventory::Pass> read_objects(Context& ctx, const MetricsArgs& args,
                                            Exposition& exposition, Scrape& scrape,
                                            std::exception_ptr& failure) {
  try {
    return inventory::survey(ctx.conn(), ctx.keys(), {args.pattern, args.type, true, true},
                             [&](const inventory::Object& o) {
                               if (!exposition.add(o)) {
                                 Printer::warn(
                                     fmt::format("rcoord: {} '{}' left out: its name is "
                                                 "not UTF-8 and reads as another's",
                                                 o.type, escape_text(o.name)));
                               }
                             });
  } catch (const Error& e) {
    if (e.code() != kConnection && e.code() != kServer) throw;
    scrape.up = false;
    failure = std::current_exception();
    return std::nullopt;
  }
}

int run_metrics(Context& ctx, const MetricsArgs& args) {
  bool to_file = args.textfile && *args.textfile != "-";
  // Before any connection: a FILE that cannot be replaced is a usage error, and so is JSON
  // for a file whose reader (the textfile collector) reads the text format only.
  if (to_file && ctx.out().json()) {
    throw Error(kUsage, "--textfile writes the Prometheus text format, not JSON",
                "leave out -o json, or --textfile to print JSON");
  }
  if (to_file) check_replaceable(*args.textfile);
  Exposition exposition;
  Scrape scrape;
  std::exception_ptr failure;
  auto pass = read_objects(ctx, args, exposition, scrape, failure);
  scrape.timestamp_seconds = unix_seconds_now();
  if (to_file) {
    replace_file(*args.textfile, exposition.text(scrape));
  } else if (ctx.out().json()) {
    ctx.out().write_json(exposition.json(scrape));
  } else {
    ctx.out().write_raw(exposition.text(scrape));
  }
  if (failure) std::rethrow_exception(failure);
  if (!pass->unreachable.empty()) throw inventory::unreachable_error(*pass, "read");
  return 0;
}

}  // namespace

void add_metrics(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<MetricsArgs>();
  auto* metrics =
      app.add_subcommand("metrics", "Print the objects' figures in the Prometheus text format");
  metrics->add_option("pattern", args->pattern, "Glob over whole object names (default *)");
  add_type_option(metrics, args->type);
  metrics
      ->add_option("--textfile", args->textfile,
                   "Write them to FILE instead, atomically (for node_exporter's textfile "
                   "collector: name it *.prom in its directory); - is stdout")
      ->type_name("FILE");
  metrics->footer(
      "First rcoord_up (1 when the server was read) and rcoord_scrape_timestamp_seconds, then\n"
      "one gauge per figure, labelled name=\"OBJECT\" (escaped as the format asks): lock held,\n"
      "held_seconds, fence and waiting; sem permits_in_use, limit and waiting; queue messages\n"
      "by state; limit remaining; elect has_leader and term; bloom items and fill_ratio; pf\n"
      "estimate; latch remaining. Then the take counters of each lock, sem, elect and gate (a\n"
      "gate named by its parts: lock:db,sem:encoders) (rcoord_lock_acquired_total,\n"
      "_busy_total, _lost_total) and its wait histogram (rcoord_lock_wait_seconds, 0.005 to\n"
      "60 s). -o json prints the same as one JSON object\n"
      "(up, scraped_at, metrics by name with their samples' labels and values); with\n"
      "--textfile FILE it is exit 2. A server that cannot be read gives rcoord_up 0 and the\n"
      "timestamp alone, printed or written to FILE (so a collector does not serve old\n"
      "figures), then exit 3 (4 when the server refused). With a cluster master unreachable,\n"
      "the rest is printed (or written) and rcoord exits 3 naming it. A FILE that exists and\n"
      "is not a regular file (a device, a FIFO, a symbolic link, a directory) is exit 2: it\n"
      "is never replaced.\n"
      "Examples:\n"
      "  rcoord metrics --type queue\n"
      "  rcoord metrics -o json | jq '.metrics.rcoord_lock_held.samples'\n"
      "  rcoord metrics --textfile /var/lib/prometheus/node-exporter/rcoord.prom");
  metrics->callback(
      [&ctx, args] { ctx.action = [&ctx, args] { return run_metrics(ctx, *args); }; });
}

}  // namespace rcoord::cmd
