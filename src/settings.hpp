#pragma once
/// The global options and the settings resolved from them (SPEC §1; the precedence is told in
/// docs/configuration.md): each setting comes from the command line, else the environment, else
/// the config file, else the built-in default; the password from the first rung of its ladder.
/// Resolution is a pure function: the environment and the files it may read are passed in.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config.hpp"
#include "duration.hpp"
#include "output.hpp"
#include "url.hpp"

namespace rcoord {

constexpr int kMaxPort = 65535;
constexpr int kMaxDb = 1'000'000;
constexpr int kMaxWaitReplicas = 1000;
/// --wait-replicas auto (the default): wait for every replica connected when the write is made.
constexpr int kWaitReplicasAuto = -1;
/// Events an object's history keeps by default, and at most (--history): the take scripts
/// read back through it to notice a lease that expired, so it stays small.
constexpr int kDefaultHistory = 100;
constexpr int kMaxHistory = 10'000;
/// The longest note (--note, $RCOORD_NOTE, `note` in the config file), in bytes: it is copied
/// into every event a call records, and a link to a CI run fits many times over.
constexpr std::size_t kMaxNoteBytes = 1024;

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
  int wait_replicas = kWaitReplicasAuto;
  int history = kDefaultHistory;
  std::string note;

  /// The keys (GlobalOption::key) of the options the command line gave: the fields of the
  /// others hold defaults that must not outrank the environment or the config file.
  std::set<std::string, std::less<>> given;
  bool was_given(std::string_view key) const { return given.find(key) != given.end(); }
};

/// One global option. The table of them (global_options()) is the one list that the CLI's
/// registration, main's search for the command word and the config file's keys all read.
struct GlobalOption {
  /// How the value is checked as the command line is parsed.
  enum class Check { kNone, kDuration, kOutputFormat, kDecimalRange, kReplicaCount };
  using Field =
      std::variant<bool GlobalOptions::*, int GlobalOptions::*, std::string GlobalOptions::*,
                   std::vector<std::string> GlobalOptions::*>;

  std::string_view key{};    ///< the long name: the config file's key, and the key of `given`
  std::string_view names{};  ///< the names on the command line, as CLI11 takes them: "-u,--url"
  std::string_view help{};
  std::string_view type_name{};  ///< what the help shows for the value; empty for a flag
  Field field{};                 ///< where the parsed value goes; a bool is a flag
  Check check = Check::kNone;
  int min = 0;  ///< the range of a kDecimalRange value
  int max = 0;
  bool in_config = true;  ///< the config file may set it (not --config itself, nor -a)

  bool takes_value() const { return !std::holds_alternative<bool GlobalOptions::*>(field); }
  /// Whether `arg` is one of `names` (`-u` or `--url`, not `--url=x`).
  bool named(std::string_view arg) const;
  /// Whether a command line's words (its arguments, without the program) may name this option
  /// before a `--`: a long name alone or with `=value`, or a short name's letter in a word of
  /// short options (`-u`, `-ux`, `-qu`). A yes may be wrong, a no never is.
  bool may_be_named_in(std::span<char* const> words) const;
};

/// Every global option, in the order the help lists them.
std::span<const GlobalOption> global_options();

/// The global option whose key is `key`; nullptr when none.
const GlobalOption* find_global_option(std::string_view key);

/// Whether `arg` is a global option whose value is the next argument (`-p` in `-p 6379`).
bool global_option_takes_value(std::string_view arg);

/// Settings after precedence has been applied; nothing here touches the network.
struct Settings {
  Endpoint endpoint;  ///< the server; with several --url, the first of `endpoints`
  /// Every --url when three or more were given (a Redlock over independent masters, used by
  /// `lock` only); otherwise just `endpoint`.
  std::vector<Endpoint> endpoints;
  Millis timeout{2000};
  /// Whether the timeout was chosen (--timeout, or the config file) rather than the default,
  /// which a `run` form may shrink to fit a short lease (supervise.hpp, run_margin).
  bool timeout_given = false;
  std::string prefix = "rcoord:";
  Format format = Format::kText;
  bool quiet = false;
  /// Replica acknowledgements every write waits for; kWaitReplicasAuto: every replica
  /// connected when the write is made.
  int wait_replicas = kWaitReplicasAuto;
  /// What every take records as its note (SPEC §5): --note, $RCOORD_NOTE, `note` in the
  /// config file, else a link to the CI run when in CI; may be empty.
  std::string note;
  /// How many events each object's history keeps (SPEC §5 history); 0 records none.
  int history = kDefaultHistory;
};

/// What resolution reads besides the command line and the config file: the environment
/// variables and the files that options name. process_environment() is the real one; tests
/// pass their own.
struct Environment {
  /// The value of an environment variable; nullopt when unset (an empty value is unset too,
  /// whatever this returns).
  std::function<std::optional<std::string>(std::string_view name)> variable;
  /// The whole text of a password file. Throws Error(kUsage) when it cannot be read.
  std::function<std::string(const std::string& path)> read_password_file;
  /// 0 when the file can be read, else the errno that says why not.
  std::function<int(const std::string& path)> unreadable;
  /// Whether a file exists (the default config file is read only when it does).
  std::function<bool(const std::string& path)> exists;
};

/// The process's environment variables and files.
Environment process_environment();

/// A config file's path and values; an empty path: no config file.
struct ConfigFile {
  std::string path;
  ConfigValues values;
};

/// Which config file to read: --config, else $RCOORD_CONFIG, else
/// ~/.config/rcoord/config.toml when it exists; "" for none.
std::string config_file_path(const GlobalOptions& given, const Environment& env);

/// What the chosen command says of itself that the settings depend on.
struct CommandTraits {
  std::string name;           ///< the command's group (`lock`), named in messages
  bool several_urls = false;  ///< it takes several --url (the Redlock forms, `ping`)
};

/// Applies the precedence of every global option: the command line (`given`), then `env`,
/// then `config`, then the default; -h/-p/-n/-s/--user refine the URL, and the password is
/// the first rung of its ladder. A password file is read only when no earlier rung gave a
/// password, and at most once. Throws Error(kUsage) on a bad value, an unknown config key, a
/// conflict (TLS options without TLS, several --url where the command takes one...).
Settings resolve_settings(const GlobalOptions& given, const ConfigFile& config,
                          const Environment& env, const CommandTraits& command);

}  // namespace rcoord
