#pragma once
/// Strict parsing of durations (`250ms`, `1h30m`, bare seconds) and rates (`N/s`, `N/10s`).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rcoord {

using Millis = std::chrono::milliseconds;

/// Parses `250ms`, `30s`, `5m`, `1h`, `1h30m` or a bare number of seconds; a decimal
/// fraction is accepted too (`1.5s`, `0.25`), as flock -w does.
/// nullopt for anything else (empty, negative, spaces, unknown unit, overflow).
std::optional<Millis> parse_duration(std::string_view text);

/// Whether parse_duration refuses `text` only for being longer than its limit (10 years),
/// so a message can say "too long" rather than "bad duration".
bool duration_too_long(std::string_view text);

/// Whether parse_duration refuses `text` only for being more than 0 and less than 1ms
/// (`0.5ms`): durations count whole milliseconds, so a message can say "too short".
bool duration_too_short(std::string_view text);

/// Like parse_duration, but also accepts `forever` (Millis::max()).
std::optional<Millis> parse_wait(std::string_view text);

/// Parses a duration or throws Error(kUsage) naming the option and the value (and saying
/// "too long" for a duration past the limit).
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

/// Parses a whole number written in decimal: digits only, no sign (every count, limit and
/// bound rcoord takes is at least 0). Leading zeros are decimal (`010` is ten), as in
/// durations. nullopt for anything else: `+5`, `-5`, `-0`, spaces, `0x10`, `1e3`, `1.0`, or a
/// value outside int64.
std::optional<std::int64_t> parse_decimal(std::string_view text);

/// Whether `text` is all decimal digits (so a value that parse_decimal refuses is too large
/// rather than malformed).
bool is_decimal(std::string_view text);

/// Parses a real number written in decimal: `0.01`, `.5`, `-2`, `1e-3`. nullopt for hex
/// (`0x1p-3`), `inf`, `nan`, spaces and anything else.
std::optional<double> parse_decimal_real(std::string_view text);

/// Prints `ms` in seconds to a tenth (`2.5s`), as messages show what is left of a lease.
std::string seconds_text(std::int64_t ms);

/// Prints a duration back in the shortest exact form (`1500ms`, `90s`, `2m`).
std::string format_duration(Millis d);
/// As format_duration, and `forever` for Millis::max() (parse_wait's forever).
std::string format_wait(Millis d);
/// An elapsed time as an operator reads it, to the second past a minute: `12.3s`, `14m30s`,
/// `3h05m`, `2d04h`.
std::string format_elapsed(Millis d);

}  // namespace rcoord
