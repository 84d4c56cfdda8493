#include <algorithm>

#include "settings.hpp"

// The table of the global options: what registers them on the command line, what finds the
// command word after them, and what the config file's keys are checked against.

namespace rcoord {
namespace {

using O = GlobalOptions;
using Check = GlobalOption::Check;

constexpr GlobalOption kGlobalOptions[] = {
    {.key = "url",
     .names = "-u,--url",
     .help = "Redis URL: redis://[user[:pass]@]host[:port][/db], unix:///path.sock "
             "(default: $RCOORD_URL, $REDIS_URL, redis://127.0.0.1:6379); "
             "repeatable: 3 or more independent masters make `lock` a Redlock",
     .type_name = "URL",
     .field = &O::urls},
    {.key = "password-file",
     .names = "--password-file",
     .help = "Read the password from FILE (or set $RCOORD_PASSWORD)",
     .type_name = "FILE",
     .field = &O::password_file},
    {.key = "timeout",
     .names = "--timeout",
     .help = "Connect and reply timeout (default 2s)",
     .type_name = "DURATION",
     .field = &O::timeout,
     .check = Check::kDuration},
    {.key = "prefix",
     .names = "--prefix",
     .help = "Namespace of every key rcoord creates (default rcoord:)",
     .type_name = "STR",
     .field = &O::prefix},
    {.key = "output",
     .names = "-o,--output",
     .help = "Output format: text or json",
     .type_name = "text|json",
     .field = &O::output,
     .check = Check::kOutputFormat},
    {.key = "json", .names = "--json", .help = "Same as -o json", .field = &O::json},
    {.key = "quiet",
     .names = "-q,--quiet",
     .help = "Print nothing on stdout; the exit code says it",
     .field = &O::quiet},
    {.key = "config",
     .names = "--config",
     .help = "TOML file of defaults (default: $RCOORD_CONFIG, then ~/.config/rcoord/config.toml)",
     .type_name = "FILE",
     .field = &O::config,
     .in_config = false},
    {.key = "host",
     .names = "-h",
     .help = "Server host (as redis-cli; overrides --url's host)",
     .type_name = "HOST",
     .field = &O::host},
    {.key = "port",
     .names = "-p",
     .help = "Server port (as redis-cli)",
     .type_name = "PORT",
     .field = &O::port,
     .check = Check::kDecimalRange,
     .min = 1,
     .max = kMaxPort},
    {.key = "db",
     .names = "-n",
     .help = "Database number (as redis-cli)",
     .type_name = "DB",
     .field = &O::db,
     .check = Check::kDecimalRange,
     .min = 0,
     .max = kMaxDb},
    // A password is never read from the config file: it would sit in a file meant for
    // defaults; the config file names a password-file instead.
    {.key = "password",
     .names = "-a,--pass",
     .help = "Password (as redis-cli; visible in ps: prefer --password-file)",
     .type_name = "PASSWORD",
     .field = &O::password,
     .in_config = false},
    {.key = "no-auth-warning",
     .names = "--no-auth-warning",
     .help = "Do not warn about a password on the command line (as redis-cli)",
     .field = &O::no_auth_warning,
     .in_config = false},
    {.key = "user",
     .names = "--user",
     .help = "ACL user name (as redis-cli)",
     .type_name = "NAME",
     .field = &O::user},
    {.key = "socket",
     .names = "-s",
     .help = "Unix socket path (as redis-cli)",
     .type_name = "SOCKET",
     .field = &O::socket},
    {.key = "tls",
     .names = "--tls",
     .help = "Use TLS, as a rediss:// URL does (as redis-cli)",
     .field = &O::tls},
    {.key = "tls-ca",
     .names = "--tls-ca,--cacert",
     .help = "CA certificate(s) that sign the server's (default: the system's)",
     .type_name = "FILE",
     .field = &O::tls_ca},
    {.key = "tls-cert",
     .names = "--tls-cert,--cert",
     .help = "Client certificate for mutual TLS, PEM",
     .type_name = "FILE",
     .field = &O::tls_cert},
    {.key = "tls-key",
     .names = "--tls-key,--key",
     .help = "Private key of the client certificate, PEM",
     .type_name = "FILE",
     .field = &O::tls_key},
    {.key = "tls-insecure",
     .names = "--tls-insecure,--insecure",
     .help = "Do not verify the server's certificate and name (testing only)",
     .field = &O::tls_insecure},
    {.key = "sni",
     .names = "--sni",
     .help = "Server name to send and verify in TLS",
     .type_name = "HOST",
     .field = &O::sni},
    {.key = "sentinel",
     .names = "--sentinel",
     .help = "Find the master through this Sentinel (repeatable)",
     .type_name = "HOST:PORT",
     .field = &O::sentinels},
    {.key = "sentinel-master",
     .names = "--sentinel-master",
     .help = "Name of the master the sentinels monitor",
     .type_name = "NAME",
     .field = &O::sentinel_master},
    {.key = "wait-replicas",
     .names = "--wait-replicas",
     .help = "After each write, wait for N replicas to acknowledge it (Redis WAIT); auto "
             "(default): every replica connected when the write is made; 0: none",
     .type_name = "N|auto",
     .field = &O::wait_replicas,
     .check = Check::kReplicaCount,
     .min = 0,
     .max = kMaxWaitReplicas},
    {.key = "note",
     .names = "--note",
     .help = "Recorded with what this command takes, for `status`, `ls` and `history` "
             "(default: $RCOORD_NOTE, else a link to the CI run when in CI)",
     .type_name = "TEXT",
     .field = &O::note},
    {.key = "history",
     .names = "--history",
     .help = "Events each lock, semaphore, election and queue keeps in its history, for "
             "`rcoord history` (0 records none)",
     .type_name = "N",
     .field = &O::history,
     .check = Check::kDecimalRange,
     .min = 0,
     .max = kMaxHistory},
};

// Whether `pred` holds for one of the names in `names` ("-u,--url").
template <typename Pred>
bool any_name(std::string_view names, Pred pred) {
  while (!names.empty()) {
    auto comma = names.find(',');
    if (pred(names.substr(0, comma))) return true;
    names = comma == std::string_view::npos ? std::string_view{} : names.substr(comma + 1);
  }
  return false;
}

}  // namespace

const GlobalOption* find_global_option(std::string_view key) {
  for (const auto& option : kGlobalOptions) {
    if (option.key == key) return &option;
  }
  return nullptr;
}

bool GlobalOption::named(std::string_view arg) const {
  return any_name(names, [&](std::string_view name) { return name == arg; });
}

bool GlobalOption::may_be_named_in(std::span<char* const> words) const {
  for (std::string_view word : words) {
    if (word == "--") return false;
    if (word.size() < 2 || word[0] != '-') continue;
    bool named_here = any_name(names, [word](std::string_view name) {
      if (name.size() > 2 && name.starts_with("--")) {
        return word == name || (word.starts_with(name) && word[name.size()] == '=');
      }
      return name.size() == 2 && word[1] != '-' && word.find(name[1], 1) != std::string_view::npos;
    });
    if (named_here) return true;
  }
  return false;
}

std::span<const GlobalOption> global_options() { return kGlobalOptions; }

bool global_option_takes_value(std::string_view arg) {
  return std::any_of(std::begin(kGlobalOptions), std::end(kGlobalOptions),
                     [&](const GlobalOption& o) { return o.takes_value() && o.named(arg); });
}

}  // namespace rcoord
