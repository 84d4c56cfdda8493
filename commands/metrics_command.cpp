#include "metrics_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "atomic_file.hpp"
#include "ops_command.hpp"
#include "text.hpp"

namespace rcoord::cmd {
namespace {

struct Metric {
  std::string_view name;
  std::string_view help;
};

// Every metric `rcoord metrics` exports (SPEC §5), all gauges, in the order they are printed.
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
    {"rcoord_pf_count", "Estimated distinct items of the HyperLogLog"},
    {"rcoord_latch_count", "Count left before the latch opens"},
};

std::size_t metric_index(std::string_view name) {
  auto it = std::find_if(std::begin(kMetrics), std::end(kMetrics),
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

Exposition::Exposition() : samples_(std::size(kMetrics)) {}

bool Exposition::add(const inventory::Object& o) {
  std::string label = escape_label(utf8_or_hex(o.name));
  if (!labels_.insert(o.type + '\0' + label).second) return false;
  for (const auto& g : o.gauges) {
    std::size_t i = metric_index(g.metric);
    if (i >= samples_.size()) continue;
    std::string& out = samples_[i];
    out += g.metric;
    out += "{name=\"";
    out += label;
    if (!g.state.empty()) {
      out += "\",state=\"";
      out += g.state;
    }
    out += fmt::format("\"}} {}\n", g.value);
  }
  return true;
}

std::string Exposition::text() const {
  std::string out;
  for (std::size_t i = 0; i < samples_.size(); ++i) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", kMetrics[i].name, kMetrics[i].help,
                       kMetrics[i].name);
    out += samples_[i];
  }
  return out;
}

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
      "One gauge per figure, labelled name=\"OBJECT\" (escaped as the format asks): lock held,\n"
      "held_seconds, fence and waiting; sem permits_in_use, limit and waiting; queue messages\n"
      "by state; limit remaining; elect has_leader and term; bloom items and fill_ratio; pf\n"
      "count; latch count. With a cluster master unreachable, the rest is printed (or written)\n"
      "and rcoord exits 3 naming it. A FILE that exists and is not a regular file (a device,\n"
      "a FIFO, a symbolic link, a directory) is exit 2: it is never replaced.\n"
      "Examples:\n"
      "  rcoord metrics --type queue\n"
      "  rcoord metrics --textfile /var/lib/prometheus/node-exporter/rcoord.prom");
  metrics->callback([&ctx, args] {
    ctx.action = [&ctx, args] {
      bool to_file = args->textfile && *args->textfile != "-";
      // Before any connection: a FILE that cannot be replaced is a usage error.
      if (to_file) check_replaceable(*args->textfile);
      Exposition exposition;
      auto pass = inventory::survey(
          ctx.conn(), ctx.keys(), {args->pattern, args->type, true},
          [&](const inventory::Object& o) {
            if (!exposition.add(o)) {
              Printer::warn(fmt::format(
                  "rcoord: {} '{}' left out: its name is not UTF-8 and reads as another's", o.type,
                  escape_text(o.name)));
            }
          });
      if (to_file) {
        replace_file(*args->textfile, exposition.text());
      } else {
        ctx.out().write_raw(exposition.text());
      }
      if (!pass.unreachable.empty()) throw inventory::unreachable_error(pass, "read");
      return 0;
    };
  });
}

}  // namespace rcoord::cmd
