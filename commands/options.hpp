#pragma once
/// Options whose values are durations, parsed once, at the command line's boundary. CLI11
/// runs an option's callback inside App::parse, after its validator: a malformed or
/// out-of-bounds value is a usage error before any verb runs, and the code behind the option
/// only ever sees a checked Millis, never the text.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "duration.hpp"

namespace rcoord::cmd {

/// CLI11 validators for a duration, and for a duration or `forever`: a bad value is a usage
/// error naming the option. The add_* functions below use them; an option that keeps its
/// text for another reason may use them alone.
extern const CLI::Validator kDurationCheck;
extern const CLI::Validator kWaitCheck;

/// What a duration option accepts besides being well formed.
struct DurationBounds {
  /// Zero is refused ("--ttl must be positive (use e.g. --ttl 30s)"): a lease or a wait of
  /// no time would take nothing, or end at once.
  bool positive = false;
  /// The example of the message for a refused value: `30s` in the one above.
  std::string_view example;
  /// Anything shorter is refused too ("--watch 50ms is too short: at least 100ms").
  Millis at_least{0};
};
/// Any well-formed duration, zero included.
inline constexpr DurationBounds kAnyDuration{};
/// A duration of at least 1ms; `example` goes into the message for zero.
constexpr DurationBounds positive(std::string_view example) { return {true, example, Millis(0)}; }

/// Adds `flags` (e.g. "--ttl") taking a DURATION into `target`, which keeps its value (the
/// default) when the option is not given.
CLI::Option* add_duration(CLI::App* verb, const std::string& flags, Millis& target,
                          const std::string& help, DurationBounds bounds = kAnyDuration);
/// As above; `target` stays nullopt when the option is not given.
CLI::Option* add_duration(CLI::App* verb, const std::string& flags, std::optional<Millis>& target,
                          const std::string& help, DurationBounds bounds = kAnyDuration);
/// Adds `flags` taking a DURATION or `forever` (Millis::max()) into `target`, which keeps its
/// value (the default) when the option is not given.
CLI::Option* add_wait(CLI::App* verb, const std::string& flags, Millis& target,
                      const std::string& help);
/// As above; `target` stays nullopt when the option is not given.
CLI::Option* add_wait(CLI::App* verb, const std::string& flags, std::optional<Millis>& target,
                      const std::string& help);

/// Adds `--expire DUR` (SPEC lifecycle) to a verb that writes an object that may end: every
/// key of the object expires DUR after the write. `expire` stays 0 when it is not given (the
/// object keeps the expiry it has). `what` names the object in the help.
CLI::Option* add_expire_option(CLI::App* verb, Millis& expire, const std::string& what);

}  // namespace rcoord::cmd
