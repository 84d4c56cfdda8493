#include "context.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
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

// --wait-replicas: `auto` (kWaitReplicasAuto), or a count 0 to max.
CLI::Validator replica_count_in(std::int64_t max) {
  CLI::Validator count = decimal_in(0, max);
  return {[count](std::string& value) -> std::string {
            if (value == "auto") {
              value = std::to_string(kWaitReplicasAuto);
              return {};
            }
            std::string refused = count(value);
            return refused.empty() ? refused : refused + ", or auto";
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

CLI::Option* add_global_option(CLI::App& app, GlobalOptions& opts, const GlobalOption& option) {
  std::string names(option.names);
  std::string help(option.help);
  CLI::Option* opt = std::visit(
      [&](auto field) -> CLI::Option* {
        if constexpr (std::is_same_v<decltype(field), bool GlobalOptions::*>) {
          return app.add_flag(names, opts.*field, help);
        } else if constexpr (std::is_same_v<decltype(field),
                                            std::vector<std::string> GlobalOptions::*>) {
          // Repeated, one value each time (`--url A --url B`): otherwise CLI11 takes every
          // word that follows, and `lock status --url A NAME` loses NAME to the URLs.
          return app.add_option(names, opts.*field, help)->take_all()->allow_extra_args(false);
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
    case GlobalOption::Check::kReplicaCount:
      opt->transform(replica_count_in(option.max));
      break;
  }
  return opt->group("Global options");
}

}  // namespace

void Context::add_global_options(CLI::App& app,
                                 const std::function<bool(const GlobalOption&)>& wanted) {
  for (const auto& option : global_options()) {
    if (wanted && !wanted(option)) continue;
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
  // `rcoord:lock-acquire:nightly-backup` in CLIENT LIST: which process is which.
  std::string what = verb_;
  std::replace(what.begin(), what.end(), ' ', '-');
  if (!object_.empty()) what += ":" + object_;
  std::string name = client_name(what);
  settings_.endpoint.client_name = name;
  for (auto& e : settings_.endpoints) e.client_name = name;
  keys_ = Keys(settings_.prefix, settings_.history);
  printer_ = Printer(settings_.format, settings_.quiet);
  Printer::set_json_errors(settings_.format == Format::kJson);
}

void Context::set_chosen(std::string verb, std::string object) {
  verb_ = std::move(verb);
  object_ = std::move(object);
}

Identity Context::identity(std::string cmd) const {
  if (cmd.empty()) cmd = verb_;
  Identity who = this_process(std::move(cmd), settings_.note);
  // An invalid TRACEPARENT is left out without a word, as W3C tracers treat one: the call
  // and its command still run (the variable reaches the command unchanged either way).
  const char* traceparent = std::getenv("TRACEPARENT");
  if (traceparent != nullptr) who.trace_id = trace_id_of(traceparent).value_or("");
  return who;
}

Connection& Context::conn() {
  if (!conn_) {
    conn_ = std::make_unique<Connection>(settings_.endpoint, settings_.timeout);
    conn_->set_wait_replicas(settings_.wait_replicas);
  }
  return *conn_;
}

}  // namespace rcoord::cmd
