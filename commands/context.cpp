#include "context.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>

#include "errors.hpp"

namespace rcoord::cmd {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// $RCOORD_PASSWORD, else redis-cli's $REDISCLI_AUTH, else nullptr.
const char* env_password() {
  const char* p = env("RCOORD_PASSWORD");
  return p != nullptr ? p : env("REDISCLI_AUTH");
}

std::string first_line(std::string text) {
  auto nl = text.find_first_of("\r\n");
  if (nl != std::string::npos) text.resize(nl);
  return text;
}

bool parse_bool(const std::string& key, const std::string& value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  throw Error(kUsage, fmt::format("bad config value for {}: '{}'", key, value),
              "use true or false");
}

// A whole number from the config file, read as the command line reads it (decimal_in).
int parse_int(const std::string& what, const std::string& value, int max) {
  auto n = parse_decimal(value);
  if (n && *n >= 0 && *n <= max) return static_cast<int>(*n);
  throw Error(kUsage, fmt::format("bad {} '{}'", what, value),
              fmt::format("use a whole number in decimal digits, 0 to {}", max));
}

// -h (or `host` in the config file) as a URL's host is checked: a control byte, a space, '/'
// or '@' is never a host, and would otherwise only fail later as a connection error.
void check_host_option(const std::string& host) {
  if (plausible_host(host)) return;
  throw Error(kUsage, fmt::format("bad host '{}'", host.substr(0, 200)),
              "give a host name or IP address without spaces or control bytes, e.g. -h 127.0.0.1");
}

constexpr int kMaxDb = 1'000'000;
constexpr int kMaxWaitReplicas = 1000;

// A password file holds one password: a larger one is a mistake (`--password-file /dev/zero`).
constexpr std::size_t kMaxPasswordFileBytes = std::size_t{64} * 1024;

// The first line of a password file. An empty one is a mistake (a file not yet filled
// in): sending an empty password would only fail later as an authentication error.
std::string read_password_file(const std::string& path) {
  std::string password = first_line(read_small_file(path, "password file", kMaxPasswordFileBytes,
                                                    "put the password on the first line"));
  if (password.empty()) {
    throw Error(kUsage, fmt::format("password file '{}' is empty", path),
                "put the password on its first line");
  }
  return password;
}

std::string default_config_path() {
  const char* home = env("HOME");
  if (home == nullptr) return {};
  std::string path = std::string(home) + "/.config/rcoord/config.toml";
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? path : std::string{};
}

}  // namespace

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

void Context::add_global_options(CLI::App& app) {
  root_ = &app;
  auto add = [&](const std::string& key, CLI::Option* opt) {
    opt->group("Global options");
    options_[key] = opt;
  };
  add("url", app.add_option("-u,--url", opts.urls,
                            "Redis URL: redis://[user[:pass]@]host[:port][/db], unix:///path.sock "
                            "(default: $RCOORD_URL, $REDIS_URL, redis://127.0.0.1:6379); "
                            "repeatable: 3 or more independent masters make `lock` a Redlock")
                 ->type_name("URL"));
  add("password-file", app.add_option("--password-file", opts.password_file,
                                      "Read the password from FILE (or set $RCOORD_PASSWORD)")
                           ->type_name("FILE"));
  add("timeout", app.add_option("--timeout", opts.timeout, "Connect and reply timeout (default 2s)")
                     ->type_name("DURATION")
                     ->check(kDurationCheck));
  add("prefix", app.add_option("--prefix", opts.prefix,
                               "Namespace of every key rcoord creates (default rcoord:)")
                    ->type_name("STR"));
  add("output", app.add_option("-o,--output", opts.output, "Output format: text or json")
                    ->check(CLI::IsMember({"text", "json"}).description(""))
                    ->type_name("text|json"));
  add("json", app.add_flag("--json", opts.json, "Same as -o json"));
  add("quiet",
      app.add_flag("-q,--quiet", opts.quiet, "Print nothing on stdout; the exit code says it"));
  add("config", app.add_option("--config", opts.config,
                               "TOML file of defaults (default: $RCOORD_CONFIG, then "
                               "~/.config/rcoord/config.toml)")
                    ->type_name("FILE"));
  add("host", app.add_option("-h", opts.host, "Server host (as redis-cli; overrides --url's host)")
                  ->type_name("HOST"));
  add("port", app.add_option("-p", opts.port, "Server port (as redis-cli)")
                  ->type_name("PORT")
                  ->transform(decimal_in(1, 65535)));
  add("db", app.add_option("-n", opts.db, "Database number (as redis-cli)")
                ->type_name("DB")
                ->transform(decimal_in(0, kMaxDb)));
  add("password", app.add_option("-a,--pass", opts.password,
                                 "Password (as redis-cli; visible in ps: prefer --password-file)")
                      ->type_name("PASSWORD"));
  add("no-auth-warning",
      app.add_flag("--no-auth-warning", opts.no_auth_warning,
                   "Do not warn about a password on the command line (as redis-cli)"));
  add("user",
      app.add_option("--user", opts.user, "ACL user name (as redis-cli)")->type_name("NAME"));
  add("socket",
      app.add_option("-s", opts.socket, "Unix socket path (as redis-cli)")->type_name("SOCKET"));
  add("tls", app.add_flag("--tls", opts.tls, "Use TLS, as a rediss:// URL does (as redis-cli)"));
  add("tls-ca", app.add_option("--tls-ca,--cacert", opts.tls_ca,
                               "CA certificate(s) that sign the server's (default: the system's)")
                    ->type_name("FILE"));
  add("tls-cert",
      app.add_option("--tls-cert,--cert", opts.tls_cert, "Client certificate for mutual TLS, PEM")
          ->type_name("FILE"));
  add("tls-key",
      app.add_option("--tls-key,--key", opts.tls_key, "Private key of the client certificate, PEM")
          ->type_name("FILE"));
  add("tls-insecure",
      app.add_flag("--tls-insecure,--insecure", opts.tls_insecure,
                   "Do not verify the server's certificate and name (testing only)"));
  add("sni", app.add_option("--sni", opts.sni, "Server name to send and verify in TLS")
                 ->type_name("HOST"));
  add("sentinel", app.add_option("--sentinel", opts.sentinels,
                                 "Find the master through this Sentinel (repeatable)")
                      ->type_name("HOST:PORT"));
  add("sentinel-master", app.add_option("--sentinel-master", opts.sentinel_master,
                                        "Name of the master the sentinels monitor")
                             ->type_name("NAME"));
  add("wait-replicas",
      app.add_option("--wait-replicas", opts.wait_replicas,
                     "After each write, wait for N replicas to acknowledge it (Redis WAIT)")
          ->type_name("N")
          ->transform(decimal_in(0, kMaxWaitReplicas)));
}

bool Context::given(const std::string& name) const {
  auto it = options_.find(name);
  return it != options_.end() && it->second->count() > 0;
}

std::optional<std::string> Context::from_config(const std::string& key) const {
  auto it = config_.find(key);
  if (it == config_.end() || it->second.empty()) return std::nullopt;
  return it->second.front();
}

void Context::resolve() {
  std::string config_path = opts.config;
  if (config_path.empty() && env("RCOORD_CONFIG") != nullptr) config_path = env("RCOORD_CONFIG");
  if (config_path.empty()) config_path = default_config_path();
  if (!config_path.empty()) config_ = load_config(config_path);

  static const char* const kKnown[] = {
      "url",          "password-file", "timeout", "prefix",   "output",
      "json",         "quiet",         "user",    "host",     "port",
      "db",           "socket",        "tls",     "tls-ca",   "tls-cert",
      "tls-key",      "tls-insecure",  "sni",     "sentinel", "sentinel-master",
      "wait-replicas"};
  for (const auto& [key, values] : config_) {
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      throw Error(kUsage,
                  fmt::format("unknown key '{}' in config file {}", mask_url(key), config_path),
                  "use global option names such as url, timeout, prefix, output");
    }
  }

  if (given("timeout")) {
    settings_.timeout = duration_or_throw("--timeout", opts.timeout);
  } else if (auto t = from_config("timeout")) {
    settings_.timeout = duration_or_throw("timeout in the config file", *t);
  }
  if (settings_.timeout.count() <= 0) {
    throw Error(kUsage, "--timeout must be positive", "use e.g. --timeout 2s");
  }
  std::string prefix_origin = "--prefix";
  if (given("prefix")) {
    settings_.prefix = opts.prefix;
  } else if (auto p = from_config("prefix")) {
    settings_.prefix = *p;
    prefix_origin = "prefix in the config file";
  }
  // Every key's hash tag is rcoord's own `{type:name}`: a brace in the prefix would make
  // the tag something else (on a Cluster, keys of one object in several slots).
  if (settings_.prefix.find_first_of("{}") != std::string::npos) {
    throw Error(kUsage,
                fmt::format("{} '{}' holds a '{{' or '}}'", prefix_origin, settings_.prefix),
                "rcoord puts each object's keys in one hash tag of its own; use a prefix "
                "without braces, e.g. myapp:");
  }
  keys_ = Keys(settings_.prefix);
  if (given("wait-replicas")) {
    settings_.wait_replicas = opts.wait_replicas;
  } else if (auto w = from_config("wait-replicas")) {
    settings_.wait_replicas = parse_int("wait-replicas in the config file", *w, kMaxWaitReplicas);
  }
  resolve_output();
  resolve_endpoint();
}

void Context::resolve_output() {
  auto json_in_config = [&] {
    auto j = from_config("json");
    return j && parse_bool("json", *j);
  };
  if (given("output") && !given("json")) {
    settings_.format = opts.output == "json" ? Format::kJson : Format::kText;
  } else if (given("json") || json_in_config()) {
    settings_.format = Format::kJson;
  } else if (auto o = from_config("output")) {
    if (*o != "text" && *o != "json") {
      throw Error(kUsage, fmt::format("bad output '{}' in the config file", *o),
                  "use text or json");
    }
    settings_.format = *o == "json" ? Format::kJson : Format::kText;
  }
  settings_.quiet = given("quiet")
                        ? opts.quiet
                        : (from_config("quiet") && parse_bool("quiet", *from_config("quiet")));
  printer_ = Printer(settings_.format, settings_.quiet);
}

void Context::resolve_endpoint() {
  if (opts.urls.size() > 1) {
    resolve_redlock_endpoints();
    return;
  }
  // Which tier the URL came from decides how its password ranks against the others.
  enum Tier { kCli, kEnv, kConfig, kDefault };
  Tier url_tier = kDefault;
  std::string url = "redis://127.0.0.1:6379";
  if (!opts.urls.empty()) {
    url = opts.urls.front();
    url_tier = kCli;
  } else if (const char* e = env("RCOORD_URL")) {
    url = e;
    url_tier = kEnv;
  } else if (const char* r = env("REDIS_URL")) {
    url = r;
    url_tier = kEnv;
  } else if (auto c = from_config("url")) {
    url = *c;
    url_tier = kConfig;
  }
  Endpoint ep = parse_url(url);
  // A bare `word@` names the ACL user when a password also comes from elsewhere (SPEC §1).
  if (ep.bare_userinfo) take_bare_user(ep, global_password());
  std::optional<std::string> url_password = ep.password;
  ep.password.reset();

  // redis-cli flags override parts of the URL; the config file may set them too.
  auto cli_or_config = [&](const std::string& key,
                           const std::string& cli_value) -> std::optional<std::string> {
    if (given(key)) return cli_value;
    // The config file's host, port... refine a URL of its own tier (or the default), never
    // one given on the command line or in the environment.
    if (url_tier == kCli || url_tier == kEnv) return std::nullopt;
    return from_config(key);
  };
  if (auto s = cli_or_config("socket", opts.socket)) ep.socket_path = *s;
  if (auto h = cli_or_config("host", opts.host)) {
    check_host_option(*h);
    ep.host = *h;
    ep.socket_path.clear();
  }
  if (auto p = cli_or_config("port", std::to_string(opts.port))) {
    ep.port = parse_int("port", *p, 65535);
    if (ep.port == 0) throw Error(kUsage, "bad port '0'", "use a port from 1 to 65535");
    ep.socket_path.clear();
  }
  if (auto d = cli_or_config("db", std::to_string(opts.db))) ep.db = parse_int("db", *d, kMaxDb);
  if (auto u = cli_or_config("user", opts.user)) ep.user = *u;

  // Password: command line, then environment, then config file; a password given on its
  // own outranks the password inside a URL of the same tier. Each source is only read
  // (a file opened) when no earlier one gave a password.
  using Source = std::function<std::optional<std::string>()>;
  auto url_of = [&](Tier tier) -> Source {
    return [&, tier] { return url_tier == tier ? url_password : std::nullopt; };
  };
  const Source sources[] = {
      [&]() -> std::optional<std::string> {
        if (given("password")) return opts.password;
        if (given("password-file")) return read_password_file(opts.password_file);
        return std::nullopt;
      },
      url_of(kCli),
      []() -> std::optional<std::string> {
        const char* p = env_password();
        return p != nullptr ? std::optional<std::string>(p) : std::nullopt;
      },
      url_of(kEnv),
      [&]() -> std::optional<std::string> {
        auto f = from_config("password-file");
        return f ? std::optional<std::string>(read_password_file(*f)) : std::nullopt;
      },
      [&] { return url_password; },  // the config file's URL, or a default without one
  };
  for (const auto& source : sources) {
    if ((ep.password = source())) break;
  }
  resolve_tls(ep);
  resolve_sentinel(ep);
  settings_.endpoint = std::move(ep);
  settings_.endpoints = {settings_.endpoint};
}

// The password that is not part of a URL: command line, then environment, then config file.
std::optional<std::string> Context::global_password() const {
  if (given("password")) return opts.password;
  if (given("password-file")) return read_password_file(opts.password_file);
  if (const char* p = env_password()) return std::string(p);
  if (auto f = from_config("password-file")) return read_password_file(*f);
  return std::nullopt;
}

// Several --url: a Redlock over independent masters. Each URL names its node in full; a
// password given apart from the URLs (and --user) applies to the URLs that carry none.
void Context::resolve_redlock_endpoints() {
  std::string group;
  if (root_ != nullptr && !root_->get_subcommands().empty()) {
    group = root_->get_subcommands().front()->get_name();
  }
  if (group != "lock" && group != "ping") {
    throw Error(
        kUsage,
        fmt::format("several --url make a Redlock; only `lock` supports it, not `{}`", group),
        "give one --url");
  }
  if (opts.urls.size() == 2) {
    throw Error(kUsage, "a Redlock needs 3 or more --url (independent masters), not 2",
                "give one --url, or three or more");
  }
  for (auto [key, flag] :
       {std::pair{"host", "-h"}, {"port", "-p"}, {"socket", "-s"}, {"db", "-n"}}) {
    if (given(key)) {
      throw Error(kUsage, fmt::format("{} cannot apply to several --url", flag),
                  "put the host, port, socket or db in each URL");
    }
  }
  if (given("sentinel") || given("wait-replicas")) {
    throw Error(kUsage,
                "--sentinel and --wait-replicas do not apply to a Redlock (independent masters)",
                "give one --url, or drop the option");
  }
  std::optional<std::string> password = global_password();
  settings_.endpoints.clear();
  std::set<std::string> masters;
  for (const auto& url : opts.urls) {
    Endpoint ep = parse_url(url);
    // The same master twice would count its vote twice: a quorum on fewer servers.
    std::string where = ep.describe();
    std::transform(where.begin(), where.end(), where.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!masters.insert(where).second) {
      throw Error(kUsage,
                  fmt::format("{} is given twice in --url: a Redlock needs independent masters",
                              ep.describe()),
                  "give each master once");
    }
    take_bare_user(ep, password);
    if (!ep.password) ep.password = password;
    if (ep.user.empty() && given("user")) ep.user = opts.user;
    resolve_tls(ep);
    settings_.endpoints.push_back(std::move(ep));
  }
  settings_.endpoint = settings_.endpoints.front();
}

void Context::resolve_tls(Endpoint& ep) {
  auto text = [&](const std::string& key, const std::string& cli) -> std::string {
    if (given(key)) return cli;
    return from_config(key).value_or("");
  };
  auto flag = [&](const std::string& key, bool cli) {
    if (given(key)) return cli;
    auto v = from_config(key);
    return v && parse_bool(key, *v);
  };
  if (flag("tls", opts.tls)) ep.tls = true;
  TlsSettings& t = ep.tls_settings;
  t.ca_file = text("tls-ca", opts.tls_ca);
  t.cert_file = text("tls-cert", opts.tls_cert);
  t.key_file = text("tls-key", opts.tls_key);
  t.sni = text("sni", opts.sni);
  t.insecure = flag("tls-insecure", opts.tls_insecure);
  bool any = !t.ca_file.empty() || !t.cert_file.empty() || !t.key_file.empty() || !t.sni.empty() ||
             t.insecure;
  if (any && !ep.tls) {
    throw Error(kUsage, "TLS options given for a plain redis:// connection",
                "use a rediss:// URL or add --tls");
  }
  // Unreadable files are usage errors found before any connection is tried.
  for (const auto& [option, file] :
       {std::pair<const char*, const std::string&>{"--tls-ca", t.ca_file},
        {"--tls-cert", t.cert_file},
        {"--tls-key", t.key_file}}) {
    if (!file.empty() && ::access(file.c_str(), R_OK) != 0) {
      throw Error(
          kUsage,
          fmt::format("cannot read the {} file '{}': {}", option, file, std::strerror(errno)),
          "give a readable PEM file");
    }
  }
  if (!t.key_file.empty() && t.cert_file.empty()) {
    throw Error(kUsage, "--tls-key given without --tls-cert",
                "give the client certificate with --tls-cert");
  }
  if (ep.tls && !ep.socket_path.empty()) {
    throw Error(kUsage, "TLS over a unix socket is not supported", "use a rediss://host:port URL");
  }
}

void Context::resolve_sentinel(Endpoint& ep) {
  std::vector<std::string> addresses = opts.sentinels;
  if (!given("sentinel")) {
    auto it = config_.find("sentinel");
    if (it != config_.end()) addresses = it->second;
  }
  std::string master =
      given("sentinel-master") ? opts.sentinel_master : from_config("sentinel-master").value_or("");
  if (addresses.empty() && master.empty()) return;
  if (addresses.empty()) {
    throw Error(kUsage, "--sentinel-master given without --sentinel",
                "name at least one sentinel with --sentinel HOST:PORT");
  }
  if (master.empty()) {
    throw Error(kUsage, "--sentinel given without --sentinel-master",
                "name the monitored master with --sentinel-master NAME");
  }
  if (!ep.socket_path.empty()) {
    throw Error(kUsage, "--sentinel cannot be combined with a unix socket",
                "drop -s or the unix:// URL");
  }
  for (const auto& a : addresses) ep.sentinel.sentinels.push_back(parse_address(a, "--sentinel"));
  ep.sentinel.master = master;
}

Connection& Context::conn() {
  if (!conn_) {
    conn_ = std::make_unique<Connection>(settings_.endpoint, settings_.timeout);
    conn_->set_wait_replicas(settings_.wait_replicas);
  }
  return *conn_;
}

}  // namespace rcoord::cmd
