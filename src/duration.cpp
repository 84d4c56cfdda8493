#include "duration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "errors.hpp"

namespace rcoord {
namespace {

// Ten years: longer than any lease or wait makes sense, short enough that
// arithmetic on milliseconds never overflows.
constexpr std::int64_t kMaxMillis = 10LL * 365 * 24 * 3600 * 1000;

std::optional<std::int64_t> unit_millis(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s" || unit.empty()) return 1000;
  if (unit == "m") return 60'000;
  if (unit == "h") return 3'600'000;
  return std::nullopt;
}

// One `<number>[.<fraction>]<unit>` part; advances `pos`, reports the unit's size. A number
// too large for any duration (more than 18 digits once leading zeros are gone) is +infinity,
// so the caller can tell "too long" from "malformed".
std::optional<double> parse_part(std::string_view text, std::size_t& pos, bool& had_unit,
                                 std::int64_t& unit_size) {
  std::size_t start = pos;
  while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) != 0)) ++pos;
  std::size_t integer_end = pos;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) != 0)) ++pos;
  }
  std::size_t number_end = pos;
  std::string number(text.substr(start, pos - start));
  if (number.empty() || number == ".") return std::nullopt;
  std::size_t unit_start = pos;
  while (pos < text.size() && (std::isalpha(static_cast<unsigned char>(text[pos])) != 0)) ++pos;
  std::string_view unit = text.substr(unit_start, pos - unit_start);
  had_unit = !unit.empty();
  auto scale = unit_millis(unit);
  if (!scale) return std::nullopt;
  unit_size = *scale;
  std::string_view integer = text.substr(start, integer_end - start);
  while (integer.size() > 1 && integer.front() == '0') integer.remove_prefix(1);
  if (number_end - integer_end > 19) return std::nullopt;  // a fraction of more than 18 digits
  if (integer.size() > 18) return std::numeric_limits<double>::infinity();
  return std::stod(number) * static_cast<double>(*scale);
}

enum class Parsed { kOk, kMalformed, kTooLong, kTooShort };

Parsed parse_total(std::string_view text, Millis& out) {
  if (text.empty()) return Parsed::kMalformed;
  double total = 0;
  std::size_t pos = 0;
  int parts = 0;
  std::int64_t previous_unit = std::numeric_limits<std::int64_t>::max();
  while (pos < text.size()) {
    bool had_unit = false;
    std::int64_t unit = 0;
    auto part = parse_part(text, pos, had_unit, unit);
    if (!part) return Parsed::kMalformed;
    // A bare number stands alone; combined parts go largest unit first (`1h30m`, not `30m1h`).
    if (!had_unit && (parts > 0 || pos < text.size())) return Parsed::kMalformed;
    if (unit >= previous_unit) return Parsed::kMalformed;
    previous_unit = unit;
    total += *part;
    ++parts;
  }
  if (total > static_cast<double>(kMaxMillis)) return Parsed::kTooLong;
  // Durations are counted in milliseconds: a part of one is no duration (it would round to
  // 0 or to 1ms, and `0` means something else where it is allowed at all).
  if (total > 0 && total < 1) return Parsed::kTooShort;
  out = Millis(static_cast<Millis::rep>(std::round(total)));  // total is 0..kMaxMillis
  return Parsed::kOk;
}

}  // namespace

std::optional<Millis> parse_duration(std::string_view text) {
  Millis d{0};
  if (parse_total(text, d) != Parsed::kOk) return std::nullopt;
  return d;
}

bool duration_too_long(std::string_view text) {
  Millis d{0};
  return parse_total(text, d) == Parsed::kTooLong;
}

bool duration_too_short(std::string_view text) {
  Millis d{0};
  return parse_total(text, d) == Parsed::kTooShort;
}

std::optional<Millis> parse_wait(std::string_view text) {
  if (text == "forever") return Millis::max();
  return parse_duration(text);
}

namespace {

[[noreturn]] void too_long(std::string_view option, std::string_view text) {
  throw Error(kUsage, fmt::format("{} '{}' is too long", option, text),
              "give at most 10 years (87600h)");
}

[[noreturn]] void too_short(std::string_view option, std::string_view text) {
  throw Error(kUsage,
              fmt::format("{} '{}' is too short: durations count whole milliseconds", option, text),
              "give at least 1ms");
}

}  // namespace

Millis duration_or_throw(std::string_view option, std::string_view text) {
  auto d = parse_duration(text);
  if (!d && duration_too_long(text)) too_long(option, text);
  if (!d && duration_too_short(text)) too_short(option, text);
  if (!d) {
    throw Error(kUsage, fmt::format("bad {} '{}'", option, text),
                "use a duration such as 250ms, 30s, 5m, 1h30m or a number of seconds");
  }
  return *d;
}

Millis wait_or_throw(std::string_view option, std::string_view text) {
  auto d = parse_wait(text);
  if (!d && duration_too_long(text)) too_long(option, text);
  if (!d && duration_too_short(text)) too_short(option, text);
  if (!d) {
    throw Error(kUsage, fmt::format("bad {} '{}'", option, text),
                "use a duration such as 500ms, 10s, 5m, or 'forever'");
  }
  return *d;
}

std::optional<Rate> parse_rate(std::string_view text) {
  auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  std::string_view count_text = text.substr(0, slash);
  std::string_view period_text = text.substr(slash + 1);
  if (count_text.size() > 15) return std::nullopt;
  std::int64_t count = 0;
  for (char c : count_text) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return std::nullopt;
    count = count * 10 + (c - '0');
  }
  // `N/s` means per one second: a unit alone stands for one of it.
  std::string period_string(period_text);
  if (!period_text.empty() && (std::isalpha(static_cast<unsigned char>(period_text[0])) != 0)) {
    period_string = "1" + period_string;
  }
  auto period = parse_duration(period_string);
  if (!period || period->count() <= 0) return std::nullopt;
  return Rate{count, *period};
}

Rate rate_or_throw(std::string_view option, std::string_view text) {
  auto r = parse_rate(text);
  if (!r) {
    throw Error(kUsage, fmt::format("bad {} '{}'", option, text),
                "use N/PERIOD such as 10/s, 100/m, 5/h or 100/10s");
  }
  return *r;
}

bool is_decimal(std::string_view text) {
  // No sign, either way: `+5` and `-0` are refused alike (no count or bound is negative).
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

std::optional<std::int64_t> parse_decimal(std::string_view text) {
  if (!is_decimal(text)) return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_decimal_real(std::string_view text) {
  // [-]digits[.digits][e[+-]digits], at least one digit before the exponent.
  std::size_t pos = 0;
  auto digits = [&] {
    std::size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) != 0) ++pos;
    return pos - start;
  };
  if (pos < text.size() && text[pos] == '-') ++pos;
  std::size_t mantissa = digits();
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    mantissa += digits();
  }
  if (mantissa == 0) return std::nullopt;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) ++pos;
    if (digits() == 0) return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  double value = std::strtod(std::string(text).c_str(), nullptr);
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::string format_duration(Millis d) {
  auto ms = d.count();
  if (ms == 0) return "0s";
  if (ms % 3'600'000 == 0) return fmt::format("{}h", ms / 3'600'000);
  if (ms % 60'000 == 0) return fmt::format("{}m", ms / 60'000);
  if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}ms", ms);
}

std::string seconds_text(std::int64_t ms) {
  return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000);
}

std::string format_wait(Millis d) { return d == Millis::max() ? "forever" : format_duration(d); }

std::string format_elapsed(Millis d) {
  auto ms = std::max<std::int64_t>(0, d.count());
  if (ms < 60'000) return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000);
  auto s = ms / 1000;
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  if (s < 86'400) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d{:02}h", s / 86'400, s % 86'400 / 3600);
}

}  // namespace rcoord
