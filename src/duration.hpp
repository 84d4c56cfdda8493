#pragma once
/// Strict parsing of durations (`250ms`, `1h30m`, bare seconds) and rates (`N/s`, `N/10s`).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rcoord {

using Millis = std::chrono::milliseconds;

/// Parses `250ms`, `30s`, `5m`, `1h`, `1h30m` or a bare number of seconds; a decimal
/// fraction is accepted too (`1.5s`, `0.25`), as flock -w does.
/// nullopt for anything else (empty, negative, spaces, unknown unit, overflow).
std::optional<Millis> parse_duration(std::string_view text);

/// Like parse_duration, but also accepts `forever` (Millis::max()).
std::optional<Millis> parse_wait(std::string_view text);

/// Parses a duration or throws Error(kUsage) naming the option and the value.
Millis duration_or_throw(std::string_view option, std::string_view text);
Millis wait_or_throw(std::string_view option, std::string_view text);

/// A rate: `count` units of cost per `period`.
struct Rate {
  std::int64_t count = 0;
  Millis period{0};
  bool operator==(const Rate&) const = default;
};

/// Parses `N/s`, `N/m`, `N/h`, `N/DUR` (`100/10s`). A bare number has no period: nullopt.
std::optional<Rate> parse_rate(std::string_view text);
Rate rate_or_throw(std::string_view option, std::string_view text);

/// Prints a duration back in the shortest exact form (`1500ms`, `90s`, `2m`).
std::string format_duration(Millis d);

}  // namespace rcoord
