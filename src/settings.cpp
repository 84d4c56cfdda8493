#include "settings.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "errors.hpp"
#include "identity.hpp"

namespace rcoord {
namespace {

// A password file holds one password: a larger one is a mistake (`--password-file /dev/zero`).
constexpr std::size_t kMaxPasswordFileBytes = std::size_t{64} * 1024;

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

// `wait-replicas` of the config file, other than auto.
int parse_replica_count(const std::string& value) {
  auto n = parse_decimal(value);
  if (n && *n >= 0 && *n <= kMaxWaitReplicas) return static_cast<int>(*n);
  throw Error(
      kUsage, fmt::format("bad wait-replicas in the config file '{}'", value),
      fmt::format("use auto, or a whole number in decimal digits, 0 to {}", kMaxWaitReplicas));
}

// -h (or `host` in the config file) as a URL's host is checked: a control byte, a space, '/'
// or '@' is never a host, and would otherwise only fail later as a connection error.
void check_host_option(const std::string& host) {
  if (plausible_host(host)) return;
  throw Error(kUsage, fmt::format("bad host '{}'", host.substr(0, 200)),
              "give a host name or IP address without spaces or control bytes, e.g. -h 127.0.0.1");
}

std::optional<std::string> variable(const Environment& env, std::string_view name) {
  auto value = env.variable(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

// A password source, asked only when no earlier one gave a password, and at most once: a
// password file may be a pipe (`--password-file <(pass show redis)`), empty when read again.
class LazyPassword {
 public:
  explicit LazyPassword(std::function<std::optional<std::string>()> read)
      : read_(std::move(read)) {}
  const std::optional<std::string>& get() {
    if (!value_) value_ = read_();
    return *value_;
  }

 private:
  std::function<std::optional<std::string>()> read_;
  std::optional<std::optional<std::string>> value_;
};

class Resolver {
 public:
  Resolver(const GlobalOptions& given, const ConfigFile& config, const Environment& env,
           const CommandTraits& command)
      : opts_(given), config_(config), env_(env), command_(command) {}

  Settings resolve() {
    check_config_keys();
    resolve_timeout();
    resolve_prefix();
    resolve_wait_replicas();
    resolve_note();
    resolve_history();
    resolve_output();
    if (opts_.urls.size() > 1) {
      resolve_redlock_endpoints();
    } else {
      resolve_endpoint();
    }
    return std::move(settings_);
  }

 private:
  // Which tier the URL came from decides how its password ranks against the others.
  enum Tier { kCli, kEnv, kConfig, kDefault };

  bool given(std::string_view key) const { return opts_.was_given(key); }

  std::optional<std::string> from_config(std::string_view key) const {
    auto it = config_.values.find(key);
    if (it == config_.values.end() || it->second.empty()) return std::nullopt;
    return it->second.front();
  }

  void check_config_keys() const {
    for (const auto& [key, values] : config_.values) {
      const GlobalOption* option = find_global_option(key);
      if (option == nullptr || !option->in_config) {
        throw Error(kUsage,
                    fmt::format("unknown key '{}' in config file {}", mask_url(key), config_.path),
                    "use global option names such as url, timeout, prefix, output");
      }
    }
  }

  void resolve_timeout() {
    if (given("timeout")) {
      settings_.timeout = duration_or_throw("--timeout", opts_.timeout);
      settings_.timeout_given = true;
    } else if (auto t = from_config("timeout")) {
      settings_.timeout = duration_or_throw("timeout in the config file", *t);
      settings_.timeout_given = true;
    }
    if (settings_.timeout.count() <= 0) {
      throw Error(kUsage, "--timeout must be positive", "use e.g. --timeout 2s");
    }
  }

  void resolve_prefix() {
    std::string origin = "--prefix";
    if (given("prefix")) {
      settings_.prefix = opts_.prefix;
    } else if (auto p = from_config("prefix")) {
      settings_.prefix = *p;
      origin = "prefix in the config file";
    }
    // Every key's hash tag is rcoord's own `{type:name}`: a brace in the prefix would make
    // the tag something else (on a Cluster, keys of one object in several slots).
    if (settings_.prefix.find_first_of("{}") != std::string::npos) {
      throw Error(kUsage, fmt::format("{} '{}' holds a '{{' or '}}'", origin, settings_.prefix),
                  "rcoord puts each object's keys in one hash tag of its own; use a prefix "
                  "without braces, e.g. myapp:");
    }
  }

  void resolve_wait_replicas() {
    if (given("wait-replicas")) {
      settings_.wait_replicas = opts_.wait_replicas;
    } else if (auto w = from_config("wait-replicas")) {
      settings_.wait_replicas = *w == "auto" ? kWaitReplicasAuto : parse_replica_count(*w);
    }
  }

  void resolve_history() {
    if (given("history")) {
      settings_.history = opts_.history;
    } else if (auto h = from_config("history")) {
      settings_.history = parse_int("history in the config file", *h, kMaxHistory);
    }
  }

  // A note is copied into every event the call records (busy tries included), so it stays
  // small: one given longer than kMaxNoteBytes is refused, a CI link that long is cut.
  void resolve_note() {
    auto capped = [](std::string note, std::string_view origin) {
      if (note.size() <= kMaxNoteBytes) return note;
      throw Error(kUsage,
                  fmt::format("{} is {} bytes, more than the {} a note may have", origin,
                              note.size(), kMaxNoteBytes),
                  "a note is a line for people, e.g. a link to the CI run: shorten it");
    };
    if (given("note")) {
      settings_.note = capped(opts_.note, "--note");
    } else if (auto n = variable(env_, "RCOORD_NOTE")) {
      settings_.note = capped(*n, "$RCOORD_NOTE");
    } else if (auto c = from_config("note")) {
      settings_.note = capped(*c, "note in the config file");
    } else if (auto link =
                   ci_run_link([&](std::string_view name) { return variable(env_, name); })) {
      settings_.note = *link;
      if (settings_.note.size() > kMaxNoteBytes) {
        // Cut at a character boundary (a UTF-8 continuation byte is 10xxxxxx).
        std::size_t end = kMaxNoteBytes;
        while (end > 0 && (static_cast<unsigned char>(settings_.note[end]) & 0xc0) == 0x80) --end;
        settings_.note.resize(end);
      }
    }
  }

  void resolve_output() {
    auto json_in_config = [&] {
      auto j = from_config("json");
      return j && parse_bool("json", *j);
    };
    if (given("output") && !given("json")) {
      settings_.format = opts_.output == "json" ? Format::kJson : Format::kText;
    } else if (given("json") || json_in_config()) {
      settings_.format = Format::kJson;
    } else if (auto o = from_config("output")) {
      if (*o != "text" && *o != "json") {
        throw Error(kUsage, fmt::format("bad output '{}' in the config file", *o),
                    "use text or json");
      }
      settings_.format = *o == "json" ? Format::kJson : Format::kText;
    }
    if (given("quiet")) {
      settings_.quiet = opts_.quiet;
    } else if (auto q = from_config("quiet")) {
      settings_.quiet = parse_bool("quiet", *q);
    }
  }

  // The first line of a password file. An empty one is a mistake (a file not yet filled
  // in): sending an empty password would only fail later as an authentication error.
  std::string read_password_file(const std::string& path) const {
    std::string password = first_line(env_.read_password_file(path));
    if (password.empty()) {
      throw Error(kUsage, fmt::format("password file '{}' is empty", path),
                  "put the password on its first line");
    }
    return password;
  }

  // The password given apart from any URL: command line, then environment, then config file.
  std::optional<std::string> outside_password() {
    if (auto p = cli_password_.get()) return p;
    if (auto p = env_password_.get()) return p;
    return config_password_.get();
  }

  struct ChosenUrl {
    std::string url;
    Tier tier;
  };

  // --url, then $RCOORD_URL, then $REDIS_URL, then the config file's url, then the default.
  ChosenUrl choose_url() const {
    if (!opts_.urls.empty()) return {opts_.urls.front(), kCli};
    for (const char* name : {"RCOORD_URL", "REDIS_URL"}) {
      if (auto url = variable(env_, name)) return {*url, kEnv};
    }
    if (auto url = from_config("url")) return {*url, kConfig};
    return {"redis://127.0.0.1:6379", kDefault};
  }

  void resolve_endpoint() {
    ChosenUrl chosen = choose_url();
    const Tier url_tier = chosen.tier;
    Endpoint ep = parse_url(chosen.url);
    // A bare `word@` names the ACL user when a password also comes from elsewhere (SPEC §1).
    if (ep.bare_userinfo) take_bare_user(ep, outside_password());
    std::optional<std::string> url_password = ep.password;
    ep.password.reset();
    refine_endpoint(ep, url_tier);

    // Password: command line, then environment, then config file; a password given on its
    // own outranks the password inside a URL of the same tier.
    auto from_url = [&](Tier tier) { return url_tier == tier ? url_password : std::nullopt; };
    const std::function<std::optional<std::string>()> ladder[] = {
        [&] { return cli_password_.get(); },
        [&] { return from_url(kCli); },
        [&] { return env_password_.get(); },
        [&] { return from_url(kEnv); },
        [&] { return config_password_.get(); },
        [&] { return url_password; },  // the config file's URL, or a default without one
    };
    for (const auto& rung : ladder) {
      if ((ep.password = rung())) break;
    }
    resolve_tls(ep);
    resolve_sentinel(ep);
    settings_.endpoint = std::move(ep);
    settings_.endpoints = {settings_.endpoint};
  }

  // redis-cli flags override parts of the URL; the config file may set them too.
  void refine_endpoint(Endpoint& ep, Tier url_tier) const {
    auto cli_or_config = [&](std::string_view key,
                             const std::string& cli_value) -> std::optional<std::string> {
      if (given(key)) return cli_value;
      // The config file's host, port... refine a URL of its own tier (or the default), never
      // one given on the command line or in the environment.
      if (url_tier == kCli || url_tier == kEnv) return std::nullopt;
      return from_config(key);
    };
    if (auto s = cli_or_config("socket", opts_.socket)) ep.socket_path = *s;
    if (auto h = cli_or_config("host", opts_.host)) {
      check_host_option(*h);
      ep.host = *h;
      ep.socket_path.clear();
    }
    if (auto p = cli_or_config("port", std::to_string(opts_.port))) {
      ep.port = parse_int("port", *p, kMaxPort);
      if (ep.port == 0) throw Error(kUsage, "bad port '0'", "use a port from 1 to 65535");
      ep.socket_path.clear();
    }
    if (auto d = cli_or_config("db", std::to_string(opts_.db))) {
      ep.db = parse_int("db", *d, kMaxDb);
    }
    if (auto u = cli_or_config("user", opts_.user)) ep.user = *u;
  }

  // Several --url: a Redlock over independent masters. Each URL names its node in full; a
  // password given apart from the URLs (and --user) applies to the URLs that carry none.
  void resolve_redlock_endpoints() {
    if (!command_.several_urls) {
      throw Error(kUsage,
                  fmt::format("several --url make a Redlock; only `lock` supports it, not `{}`",
                              command_.name),
                  "give one --url");
    }
    if (opts_.urls.size() == 2) {
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
    std::optional<std::string> password = outside_password();
    std::set<std::string> masters;
    for (const auto& url : opts_.urls) {
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
      if (ep.user.empty() && given("user")) ep.user = opts_.user;
      resolve_tls(ep);
      settings_.endpoints.push_back(std::move(ep));
    }
    settings_.endpoint = settings_.endpoints.front();
  }

  void resolve_tls(Endpoint& ep) const {
    auto text = [&](std::string_view key, const std::string& cli) -> std::string {
      if (given(key)) return cli;
      return from_config(key).value_or("");
    };
    auto flag = [&](const std::string& key, bool cli) {
      if (given(key)) return cli;
      auto v = from_config(key);
      return v && parse_bool(key, *v);
    };
    if (flag("tls", opts_.tls)) ep.tls = true;
    TlsSettings& t = ep.tls_settings;
    t.ca_file = text("tls-ca", opts_.tls_ca);
    t.cert_file = text("tls-cert", opts_.tls_cert);
    t.key_file = text("tls-key", opts_.tls_key);
    t.sni = text("sni", opts_.sni);
    t.insecure = flag("tls-insecure", opts_.tls_insecure);
    bool any = !t.ca_file.empty() || !t.cert_file.empty() || !t.key_file.empty() ||
               !t.sni.empty() || t.insecure;
    if (any && !ep.tls) {
      throw Error(kUsage, "TLS options given for a plain redis:// connection",
                  "use a rediss:// URL or add --tls");
    }
    // Unreadable files are usage errors found before any connection is tried.
    for (const auto& [option, file] :
         {std::pair<const char*, const std::string&>{"--tls-ca", t.ca_file},
          {"--tls-cert", t.cert_file},
          {"--tls-key", t.key_file}}) {
      if (file.empty()) continue;
      if (int error = env_.unreadable(file); error != 0) {
        throw Error(
            kUsage,
            fmt::format("cannot read the {} file '{}': {}", option, file, std::strerror(error)),
            "give a readable PEM file");
      }
    }
    if (!t.key_file.empty() && t.cert_file.empty()) {
      throw Error(kUsage, "--tls-key given without --tls-cert",
                  "give the client certificate with --tls-cert");
    }
    if (ep.tls && !ep.socket_path.empty()) {
      throw Error(kUsage, "TLS over a unix socket is not supported",
                  "use a rediss://host:port URL");
    }
  }

  void resolve_sentinel(Endpoint& ep) const {
    std::vector<std::string> addresses = opts_.sentinels;
    if (!given("sentinel")) {
      auto it = config_.values.find("sentinel");
      if (it != config_.values.end()) addresses = it->second;
    }
    std::string master = given("sentinel-master") ? opts_.sentinel_master
                                                  : from_config("sentinel-master").value_or("");
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
    for (const auto& a : addresses) {
      ep.sentinel.sentinels.push_back(parse_address(a, "--sentinel"));
    }
    ep.sentinel.master = master;
  }

  const GlobalOptions& opts_;
  const ConfigFile& config_;
  const Environment& env_;
  const CommandTraits& command_;
  Settings settings_;

  // The rungs of the password ladder that are not part of a URL.
  LazyPassword cli_password_{[this]() -> std::optional<std::string> {
    if (given("password")) return opts_.password;
    if (given("password-file")) return read_password_file(opts_.password_file);
    return std::nullopt;
  }};
  LazyPassword env_password_{[this]() -> std::optional<std::string> {
    if (auto p = variable(env_, "RCOORD_PASSWORD")) return p;
    return variable(env_, "REDISCLI_AUTH");
  }};
  LazyPassword config_password_{[this]() -> std::optional<std::string> {
    if (auto f = from_config("password-file")) return read_password_file(*f);
    return std::nullopt;
  }};
};

}  // namespace

Environment process_environment() {
  return {
      .variable = [](std::string_view name) -> std::optional<std::string> {
        const char* value = std::getenv(std::string(name).c_str());
        return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
      },
      .read_password_file =
          [](const std::string& path) {
            return read_small_file(path, "password file", kMaxPasswordFileBytes,
                                   "put the password on the first line");
          },
      .unreadable =
          [](const std::string& path) { return ::access(path.c_str(), R_OK) == 0 ? 0 : errno; },
      .exists =
          [](const std::string& path) {
            struct stat st {};
            return stat(path.c_str(), &st) == 0;
          },
  };
}

std::string config_file_path(const GlobalOptions& given, const Environment& env) {
  if (!given.config.empty()) return given.config;
  if (auto path = variable(env, "RCOORD_CONFIG")) return *path;
  auto home = variable(env, "HOME");
  if (!home) return {};
  std::string path = *home + "/.config/rcoord/config.toml";
  return env.exists(path) ? path : std::string{};
}

Settings resolve_settings(const GlobalOptions& given, const ConfigFile& config,
                          const Environment& env, const CommandTraits& command) {
  return Resolver(given, config, env, command).resolve();
}

}  // namespace rcoord
