#pragma once
/// `rcoord metrics`: the objects rcoord keeps in the Prometheus text exposition format, on
/// stdout or written atomically for node_exporter's textfile collector.

#include <CLI/CLI.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "context.hpp"
#include "inventory.hpp"

namespace rcoord::cmd {
void add_metrics(CLI::App& app, Context& ctx);

/// A Prometheus label value: backslash, double quote and newline escaped, as the text
/// format asks; other bytes as they are (the value must be UTF-8).
std::string escape_label(std::string_view value);

/// The Prometheus text exposition of objects, built as they come (add()), then whole
/// (text()): every metric of SPEC §5 with its HELP and TYPE lines, and its samples together,
/// each labelled `name` (and `state` for a queue's messages).
class Exposition {
 public:
  Exposition();
  /// Adds the samples of `o`. A name that is not UTF-8 is exported with those bytes written
  /// `\xHH`; false (nothing added) when it then reads as the name of another object of the
  /// same type already added, since a series must not appear twice.
  bool add(const inventory::Object& o);
  std::string text() const;

 private:
  std::vector<std::string> samples_;  ///< per metric, in the order of the catalogue
  std::set<std::string> labels_;      ///< type, NUL, label value of each object added
};

}  // namespace rcoord::cmd
