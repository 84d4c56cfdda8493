#pragma once
/// Global options on the command line, and the lazily made connection, key namer and printer
/// every command uses. Their precedence is resolve_settings()'s (settings.hpp).

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "identity.hpp"
#include "keys.hpp"
#include "options.hpp"
#include "output.hpp"
#include "settings.hpp"

namespace rcoord::cmd {

class Context {
 public:
  GlobalOptions opts;
  /// Set by the chosen verb's callback during parsing; run by main after a clean parse.
  std::function<int()> action;
  /// The global --timeout was given after `lock run`, where flock's --timeout is a wait: the
  /// busy message then says how to wait.
  bool timeout_after_lock_run = false;

  /// Registers the global options on the root command (they also work after the verb): those
  /// for which `wanted` is true (each costs CLI11 some 20,000 instructions to register, and a
  /// one-shot command names few of them).
  void add_global_options(CLI::App& app,
                          const std::function<bool(const GlobalOption&)>& wanted = nullptr);
  /// Called by a command that takes several --url (the Redlock forms of `lock`, `ping`): for
  /// the others, several --url are a usage error.
  void allow_several_urls() { several_urls_ = true; }
  /// Applies env and config defaults and validates, for `command` (the chosen group, named
  /// in messages). Throws Error(kUsage).
  void resolve(const std::string& command);

  /// What was chosen (`lock acquire`) and the object it names (may be empty), set by main
  /// once the command line is parsed: the connections' client name and the `cmd` a take
  /// records come from them.
  void set_chosen(std::string verb, std::string object);
  const std::string& verb() const { return verb_; }
  /// Who this process is, for what it takes: `cmd` is the verb unless a run form names its
  /// command (command_basename()), the note the one the settings resolved.
  Identity identity(std::string cmd = {}) const;
  /// identity() packed for a take script's ARGV (identity.hpp's pack()).
  std::string who(std::string cmd = {}) const { return pack(identity(std::move(cmd))); }
  /// who() for a run form, whose `cmd` is the basename of the command's argv[0].
  std::string who_runs(const std::vector<std::string>& command) const {
    return who(command.empty() ? std::string{} : command_basename(command.front()));
  }

  /// Keeps a warning about a deprecated spelling on the command line, printed by main once
  /// the command line has parsed (so that a usage error stays one line).
  void deprecated(std::string warning) { deprecations_.push_back(std::move(warning)); }
  const std::vector<std::string>& deprecations() const { return deprecations_; }

  const Settings& settings() const { return settings_; }
  /// The connection, made on first use.
  Connection& conn();
  const Keys& keys() const { return keys_; }
  Printer& out() { return printer_; }

 private:
  std::map<std::string, CLI::Option*> options_;
  bool several_urls_ = false;
  std::string verb_;
  std::string object_;
  std::vector<std::string> deprecations_;
  Settings settings_;
  Keys keys_;
  Printer printer_;
  std::unique_ptr<Connection> conn_;
};

/// A CLI11 transform for an integer option: decimal digits only, with an optional '-' (CLI11
/// alone reads `010` as octal 8 and `0x10` as hex 16); leading zeros are decimal, as in
/// durations. A value outside [min, max] is refused too. The value is rewritten in canonical
/// form, so what CLI11 converts is exactly what was checked. Use with ->transform().
CLI::Validator decimal_in(std::int64_t min, std::int64_t max);
/// The largest count an option may give: counts go to Lua scripts, whose numbers are doubles,
/// exact up to 2^53.
inline constexpr std::int64_t kMaxLuaCount = (std::int64_t{1} << 53) - 1;
/// A CLI11 validator for a real-number option: decimal only (`0.01`, `1e-3`), never hex
/// (`0x1p-7`), inf or nan.
extern const CLI::Validator kDecimalReal;

/// Makes `verb`, once parsed, leave `fn(ctx, *args)` as the command's action: the options
/// were parsed into `args`, which the action shares. `fn`'s type follows from `Args`, so a name
/// that several command files give their own action (`run_status`) picks this file's.
template <typename Args>
void on_parse(CLI::App* verb, Context& ctx, const std::shared_ptr<Args>& args,
              std::type_identity_t<int (*)(Context&, const Args&)> fn) {
  verb->callback([&ctx, args, fn] { ctx.action = [&ctx, args, fn] { return fn(ctx, *args); }; });
}

/// Prints the result of a write that is not a take (a push, a release, an rm...). When stdout
/// cannot take it, the error says that the write was made (`made`, e.g. "queue 'jobs': pushed";
/// empty when this call changed nothing), so that a retry does not make it twice.
template <typename T>
void emit_made(Context& ctx, const T& result, std::string_view made) {
  try {
    ctx.out().emit(result);
  } catch (const OutputError& e) {
    if (made.empty()) throw;
    throw OutputError(e.error_number(), made);
  }
}

}  // namespace rcoord::cmd
