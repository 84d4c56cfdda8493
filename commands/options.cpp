#include "options.hpp"

#include <fmt/format.h>

#include "context.hpp"
#include "errors.hpp"

namespace rcoord::cmd {
namespace {

std::string bad_duration(const std::string& value, std::string_view examples) {
  if (duration_too_long(value)) {
    return fmt::format("duration '{}' is too long: give at most 10 years (87600h)", value);
  }
  if (duration_too_short(value)) {
    return fmt::format(
        "duration '{}' is too short: durations count whole milliseconds (give at least 1ms)",
        value);
  }
  return fmt::format("bad duration '{}': use e.g. {}", value, examples);
}

/// The long name of `flags` ("-t,--timeout" -> "--timeout"), for messages.
std::string long_name(const std::string& flags) {
  auto comma = flags.rfind(',');
  return comma == std::string::npos ? flags : flags.substr(comma + 1);
}

/// Throws the usage error for `value` of `option` outside `bounds`.
void check_bounds(const std::string& option, const std::string& text, Millis value,
                  const DurationBounds& bounds) {
  if (bounds.positive && value <= Millis(0)) {
    throw Error(kUsage, fmt::format("{} must be positive", option),
                fmt::format("use e.g. {} {}", option, bounds.example));
  }
  if (value < bounds.at_least) {
    throw Error(kUsage,
                fmt::format("{} {} is too short: at least {}", option, text,
                            format_duration(bounds.at_least)),
                fmt::format("use e.g. {} {}", option, bounds.example));
  }
}

/// The checked value of `text`, which the option's validator has found well formed.
Millis checked(const std::string& option, const std::string& text, const DurationBounds& bounds) {
  Millis value = *parse_duration(text);
  check_bounds(option, text, value, bounds);
  return value;
}

/// add_duration for a Millis or an optional one.
template <typename Target>
CLI::Option* add_checked(CLI::App* verb, const std::string& flags, Target& target,
                         const std::string& help, DurationBounds bounds) {
  std::string option = long_name(flags);
  return verb
      ->add_option_function<std::string>(
          flags,
          [&target, option, bounds](const std::string& text) {
            target = checked(option, text, bounds);
          },
          help)
      ->type_name("DURATION")
      ->check(kDurationCheck);
}

/// add_wait for a Millis or an optional one.
template <typename Target>
CLI::Option* add_checked_wait(CLI::App* verb, const std::string& flags, Target& target,
                              const std::string& help) {
  return verb
      ->add_option_function<std::string>(
          flags, [&target](const std::string& text) { target = *parse_wait(text); }, help)
      ->type_name("DURATION|forever")
      ->check(kWaitCheck);
}

}  // namespace

const CLI::Validator kDurationCheck(
    [](std::string& value) -> std::string {
      return parse_duration(value) ? std::string() : bad_duration(value, "250ms, 30s, 5m, 1h30m");
    },
    "");

const CLI::Validator kWaitCheck(
    [](std::string& value) -> std::string {
      return parse_wait(value) ? std::string() : bad_duration(value, "500ms, 10s, 5m or forever");
    },
    "");

namespace {

// A positive duration: an object that expires at once would be a write that writes nothing.
const CLI::Validator kExpireCheck(
    [](std::string& value) -> std::string {
      auto d = parse_duration(value);
      if (!d && !duration_too_short(value)) return bad_duration(value, "30m, 48h, 168h");
      if (!d || d->count() <= 0) {
        return fmt::format("bad --expire '{}': it must be at least 1ms (use e.g. 48h)", value);
      }
      return {};
    },
    "");

}  // namespace

namespace {

/// add_deprecated_wait for a Millis or an optional one.
template <typename Target>
CLI::Option* add_old_wait(CLI::App* verb, const std::string& old_flag, CLI::Option* wait,
                          Target& target, Context& ctx) {
  // `signal wait`; a command without a group (`history`) is its name alone.
  const CLI::App* group = verb->get_parent();
  std::string verb_path = group != nullptr && group->get_parent() != nullptr
                              ? group->get_name() + " " + verb->get_name()
                              : verb->get_name();
  std::string new_flag = wait->get_name();
  return verb
      ->add_option_function<std::string>(
          old_flag,
          [&target, &ctx, wait, old_flag, new_flag, verb_path](const std::string& text) {
            // Option callbacks run once the whole command line is parsed: --wait, given
            // before or after, is counted by now.
            if (wait->count() > 0) {
              throw Error(kUsage, fmt::format("{} and {} given together", old_flag, new_flag),
                          fmt::format("give {} only", new_flag));
            }
            target = *parse_wait(text);
            std::string line =
                fmt::format("rcoord: warning: {} after '{}' is deprecated: write {} {}", old_flag,
                            verb_path, new_flag, text);
            if (old_flag == "--timeout") line += " (--timeout is the I/O timeout everywhere else)";
            ctx.deprecated(std::move(line));
          },
          "")
      ->group("")
      ->type_name("DURATION|forever")
      ->check(kWaitCheck);
}

}  // namespace

CLI::Option* add_deprecated_wait(CLI::App* verb, const std::string& old_flag, CLI::Option* wait,
                                 Millis& target, Context& ctx) {
  return add_old_wait(verb, old_flag, wait, target, ctx);
}

CLI::Option* add_deprecated_wait(CLI::App* verb, const std::string& old_flag, CLI::Option* wait,
                                 std::optional<Millis>& target, Context& ctx) {
  return add_old_wait(verb, old_flag, wait, target, ctx);
}

CLI::Option* add_expire_option(CLI::App* verb, Millis& expire, const std::string& what) {
  return verb
      ->add_option_function<std::string>(
          "--expire", [&expire](const std::string& text) { expire = *parse_duration(text); },
          "Delete " + what + " DUR after this write (each --expire sets it again)")
      ->type_name("DURATION")
      ->check(kExpireCheck);
}

CLI::Option* add_duration(CLI::App* verb, const std::string& flags, Millis& target,
                          const std::string& help, DurationBounds bounds) {
  return add_checked(verb, flags, target, help, bounds);
}

CLI::Option* add_duration(CLI::App* verb, const std::string& flags, std::optional<Millis>& target,
                          const std::string& help, DurationBounds bounds) {
  return add_checked(verb, flags, target, help, bounds);
}

CLI::Option* add_wait(CLI::App* verb, const std::string& flags, Millis& target,
                      const std::string& help) {
  return add_checked_wait(verb, flags, target, help);
}

CLI::Option* add_wait(CLI::App* verb, const std::string& flags, std::optional<Millis>& target,
                      const std::string& help) {
  return add_checked_wait(verb, flags, target, help);
}

}  // namespace rcoord::cmd
