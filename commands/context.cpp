#include "context.hpp"

#include <fmt/format.h>

#include <type_traits>
#include <variant>

#include "errors.hpp"

namespace rcoord::cmd {

CLI::Validator decimal_in(std::int64_t min, std::int64_t max) {
  return {[min, max](std::string& value) -> std::string {
            if (!is_decimal(value)) {
              return fmt::format("bad number '{}': write a whole number in decimal digits", value);
            }
            auto n = parse_decimal(value);
            if (!n || *n < min || *n > max) {
              return fmt::format("{} is out of range: use {} to {}", value, min, max);
            }
            value = std::to_string(*n);
            return {};
          },
          ""};
}

const CLI::Validator kDecimalReal(
    [](std::string& value) -> std::string {
      if (parse_decimal_real(value)) return {};
      return fmt::format("bad number '{}': write a decimal number such as 0.01", value);
    },
    "");

namespace {

std::string bad_duration(const std::string& value, std::string_view examples) {
  if (duration_too_long(value)) {
    return fmt::format("duration '{}' is too long: give at most 10 years (87600h)", value);
  }
  return fmt::format("bad duration '{}': use e.g. {}", value, examples);
}

}  // namespace

const CLI::Validator kDurationCheck(
    [](std::string& value) -> std::string {
      if (parse_duration(value)) return {};
      return bad_duration(value, "250ms, 30s, 5m, 1h30m");
    },
    "");

const CLI::Validator kWaitCheck(
    [](std::string& value) -> std::string {
      if (parse_wait(value)) return {};
      return bad_duration(value, "500ms, 10s, 5m or forever");
    },
    "");

// A positive duration: an object that expires at once would be a write that writes nothing.
const CLI::Validator kExpireCheck(
    [](std::string& value) -> std::string {
      auto d = parse_duration(value);
      if (!d) return bad_duration(value, "30m, 48h, 168h");
      if (d->count() <= 0) {
        return fmt::format("bad --expire '{}': it must be at least 1ms (use e.g. 48h)", value);
      }
      return {};
    },
    "");

CLI::Option* add_expire_option(CLI::App* verb, std::string& expire, const std::string& what) {
  return verb
      ->add_option("--expire", expire,
                   "Delete " + what + " DUR after this write (each --expire sets it again)")
      ->type_name("DURATION")
      ->check(kExpireCheck);
}

Millis expire_of(const std::string& expire) {
  return expire.empty() ? Millis{0} : duration_or_throw("--expire", expire);
}

namespace {

CLI::Option* add_global_option(CLI::App& app, GlobalOptions& opts, const GlobalOption& option) {
  std::string names(option.names);
  std::string help(option.help);
  CLI::Option* opt = std::visit(
      [&](auto field) -> CLI::Option* {
        if constexpr (std::is_same_v<decltype(field), bool GlobalOptions::*>) {
          return app.add_flag(names, opts.*field, help);
        } else {
          return app.add_option(names, opts.*field, help);
        }
      },
      option.field);
  if (!option.type_name.empty()) opt->type_name(std::string(option.type_name));
  switch (option.check) {
    case GlobalOption::Check::kNone:
      break;
    case GlobalOption::Check::kDuration:
      opt->check(kDurationCheck);
      break;
    case GlobalOption::Check::kOutputFormat:
      opt->check(CLI::IsMember({"text", "json"}).description(""));
      break;
    case GlobalOption::Check::kDecimalRange:
      opt->transform(decimal_in(option.min, option.max));
      break;
  }
  return opt->group("Global options");
}

}  // namespace

void Context::add_global_options(CLI::App& app) {
  for (const auto& option : global_options()) {
    options_[std::string(option.key)] = add_global_option(app, opts, option);
  }
}

void Context::resolve(const std::string& command) {
  for (const auto& [key, option] : options_) {
    if (option->count() > 0) opts.given.insert(key);
  }
  Environment env = process_environment();
  ConfigFile config{config_file_path(opts, env), {}};
  if (!config.path.empty()) config.values = load_config(config.path);
  settings_ = resolve_settings(opts, config, env, {command, several_urls_});
  keys_ = Keys(settings_.prefix);
  printer_ = Printer(settings_.format, settings_.quiet);
}

Connection& Context::conn() {
  if (!conn_) {
    conn_ = std::make_unique<Connection>(settings_.endpoint, settings_.timeout);
    conn_->set_wait_replicas(settings_.wait_replicas);
  }
  return *conn_;
}

}  // namespace rcoord::cmd
