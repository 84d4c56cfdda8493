#pragma once
/// Global options, their resolution (command line, then environment, then config file),
/// and the lazily made connection, key namer and printer every command uses.

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config.hpp"
#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"
#include "options.hpp"
#include "output.hpp"
#include "url.hpp"

namespace rcoord::cmd {

/// The global options as given on the command line (raw text; resolved later).
struct GlobalOptions {
  std::vector<std::string> urls;
  std::string password_file;
  std::string timeout;
  std::string prefix;
  std::string output;
  bool json = false;
  bool quiet = false;
  std::string config;
  // redis-cli's connection flags
  std::string host;
  int port = 0;
  int db = 0;
  std::string password;
  bool no_auth_warning = false;
  std::string user;
  std::string socket;
  // TLS (also under redis-cli's names: --tls, --cacert, --cert, --key, --insecure, --sni)
  bool tls = false;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  bool tls_insecure = false;
  std::string sni;
  // Sentinel
  std::vector<std::string> sentinels;
  std::string sentinel_master;
  int wait_replicas = 0;
};

/// Settings after precedence has been applied; nothing here touches the network.
struct Settings {
  Endpoint endpoint;  ///< the server; with several --url, the first of `endpoints`
  /// Every --url when three or more were given (a Redlock over independent masters, used by
  /// `lock` only); otherwise just `endpoint`.
  std::vector<Endpoint> endpoints;
  Millis timeout{2000};
  std::string prefix = "rcoord:";
  Format format = Format::kText;
  bool quiet = false;
  int wait_replicas = 0;  ///< replica acknowledgements every write waits for
};

class Context {
 public:
  GlobalOptions opts;
  /// Set by the chosen verb's callback during parsing; run by main after a clean parse.
  std::function<int()> action;

  /// Registers the global options on the root command (they also work after the verb).
  void add_global_options(CLI::App& app);
  /// Applies env and config defaults and validates. Throws Error(kUsage).
  void resolve();

  const Settings& settings() const { return settings_; }
  /// The connection, made on first use.
  Connection& conn();
  const Keys& keys() const { return keys_; }
  Printer& out() { return printer_; }

 private:
  bool given(const std::string& name) const;
  std::optional<std::string> from_config(const std::string& key) const;
  void resolve_endpoint();
  void resolve_tls(Endpoint& ep);
  void resolve_sentinel(Endpoint& ep);
  void resolve_redlock_endpoints();
  std::optional<std::string> global_password() const;
  void resolve_output();

  std::map<std::string, CLI::Option*> options_;
  const CLI::App* root_ = nullptr;  ///< to name the chosen group in messages
  ConfigValues config_;
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
/// A CLI11 validator for a real-number option: decimal only (`0.01`, `1e-3`), never hex
/// (`0x1p-7`), inf or nan.
extern const CLI::Validator kDecimalReal;

/// Makes `verb`, once parsed, leave `fn(ctx, *args)` as the command's action: the options
/// were parsed into `args`, which the action shares.
template <typename Args, typename Fn>
void on_parse(CLI::App* verb, Context& ctx, const std::shared_ptr<Args>& args, Fn fn) {
  verb->callback([&ctx, args, fn] { ctx.action = [&ctx, args, fn] { return fn(ctx, *args); }; });
}

}  // namespace rcoord::cmd
