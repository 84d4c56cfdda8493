#pragma once
/// `rcoord metrics`: the objects rcoord keeps in the Prometheus text exposition format, on
/// stdout or written atomically for node_exporter's textfile collector.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "context.hpp"
#include "inventory.hpp"

namespace rcoord::cmd {
void add_metrics(CLI::App& app, Context& ctx);

/// A Prometheus label value: backslash, double quote and newline escaped, as the text
/// format asks; other bytes as they are (the value must be UTF-8).
std::string escape_label(std::string_view value);

/// What a scrape says of itself: whether the server could be read (rcoord_up), and when.
struct Scrape {
  bool up = true;
  double timestamp_seconds = 0;  ///< Unix time, with milliseconds
};

/// The Prometheus exposition of objects, built as they come (add()), then whole (text() or
/// json()): rcoord_up and rcoord_scrape_timestamp_seconds first, then every metric of SPEC
/// §5 (named as §6 says) with its HELP and TYPE lines, and its samples together, each
/// labelled `name` (and `state` for a queue's messages), then the take counters and wait
/// histograms of locks, semaphores and elections (SPEC §6). A scrape that is not up carries
/// its own two metrics only.
class Exposition {
 public:
  Exposition();
  /// Adds the samples of `o`. A name that is not UTF-8 is exported with those bytes written
  /// `\xHH`; false (nothing added) when it then reads as the name of another object of the
  /// same type already added, since a series must not appear twice.
  bool add(const inventory::Object& o);
  /// The text exposition format.
  std::string text(const Scrape& scrape = {}) const;
  /// The same as one JSON object: `up`, `scraped_at`, and `metrics` by name, each with its
  /// type, help and samples (labels and value).
  nlohmann::ordered_json json(const Scrape& scrape = {}) const;

 private:
  struct Sample {
    std::string name;  ///< the `name` label, UTF-8 (see add()), not yet escaped
    std::string_view state;
    double value = 0;
  };
  void contention_text(std::string& out, std::size_t type) const;
  void contention_json(nlohmann::ordered_json& metrics, std::size_t type) const;

  struct Counted {
    std::string name;  ///< as Sample::name
    inventory::Contention contention;
  };
  std::vector<std::vector<Sample>> samples_;   ///< per metric, in the order of the catalogue
  std::vector<std::vector<Counted>> counted_;  ///< per type of kContended
  std::unordered_set<std::string> labels_;     ///< type, NUL, label value of each object added
};

}  // namespace rcoord::cmd
