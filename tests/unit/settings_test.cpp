// Settings: which source wins for every global option (the command line, the environment,
// the config file, the default), the password ladder and the userinfo rule of SPEC §1 and
// the man page's PRECEDENCE, fed to resolve_settings() without a server or a real process
// environment.

#include "settings.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "errors.hpp"

using namespace std::chrono_literals;
using rcoord::ConfigFile;
using rcoord::Environment;
using rcoord::Format;
using rcoord::GlobalOptions;
using rcoord::Settings;

namespace {

// Everything a resolution reads: the command line, the environment variables, the files
// options name and the config file, with a log of the password files read.
struct World {
  GlobalOptions cli;
  std::map<std::string, std::string, std::less<>> vars;
  std::map<std::string, std::string> files;  // path -> text; any other path cannot be read
  ConfigFile config{"/etc/rcoord.toml", {}};
  rcoord::CommandTraits command{"ping", false};
  std::vector<std::string> reads;

  // An option as the command line gives it, by its key in the table of global options.
  World& given(std::string_view key, const std::string& value = {}) {
    auto options = rcoord::global_options();
    auto it = std::find_if(options.begin(), options.end(),
                           [&](const rcoord::GlobalOption& o) { return o.key == key; });
    REQUIRE(it != options.end());
    std::visit(
        [&](auto field) {
          auto& slot = cli.*field;
          using T = std::remove_reference_t<decltype(slot)>;
          if constexpr (std::is_same_v<T, bool>) {
            slot = true;
          } else if constexpr (std::is_same_v<T, int>) {
            slot = std::stoi(value);
          } else if constexpr (std::is_same_v<T, std::string>) {
            slot = value;
          } else {
            slot.push_back(value);
          }
        },
        it->field);
    cli.given.insert(std::string(key));
    return *this;
  }
  World& env(const std::string& name, const std::string& value) {
    vars[name] = value;
    return *this;
  }
  World& conf(const std::string& key, const std::string& value) {
    config.values[key].push_back(value);
    return *this;
  }
  World& file(const std::string& path, const std::string& text) {
    files[path] = text;
    return *this;
  }
  World& takes_several_urls(std::string name = "lock") {
    command = {std::move(name), true};
    return *this;
  }

  Environment environment() {
    return {
        .variable = [this](std::string_view name) -> std::optional<std::string> {
          auto it = vars.find(name);
          return it != vars.end() ? std::optional<std::string>(it->second) : std::nullopt;
        },
        .read_password_file =
            [this](const std::string& path) {
              reads.push_back(path);
              auto it = files.find(path);
              if (it == files.end()) throw rcoord::Error(rcoord::kUsage, "cannot read " + path);
              return it->second;
            },
        .unreadable = [this](const std::string& path) { return files.count(path) ? 0 : ENOENT; },
        .exists = [this](const std::string& path) { return files.count(path) > 0; },
    };
  }

  Settings resolve() { return rcoord::resolve_settings(cli, config, environment(), command); }

  rcoord::Endpoint endpoint() { return resolve().endpoint; }
  std::optional<std::string> password() { return endpoint().password; }

  // The message of the usage error resolution must end in.
  std::string refusal() {
    try {
      resolve();
    } catch (const rcoord::Error& e) {
      CHECK(e.code() == rcoord::kUsage);
      return e.what();
    }
    return "(accepted)";
  }
};

std::vector<std::string> names_taking_a_value() {
  std::vector<std::string> names;
  for (const auto& o : rcoord::global_options()) {
    std::string_view rest = o.names;
    while (!rest.empty()) {
      auto comma = rest.find(',');
      std::string name(rest.substr(0, comma));
      CHECK(o.named(name));
      CHECK(rcoord::global_option_takes_value(name) == o.takes_value());
      if (o.takes_value()) names.push_back(name);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }
  return names;
}

}  // namespace

TEST_CASE("one table of global options: the CLI's names, main's scan, the config's keys") {
  CHECK(names_taking_a_value() == std::vector<std::string>{"-u",
                                                           "--url",
                                                           "--password-file",
                                                           "--timeout",
                                                           "--prefix",
                                                           "-o",
                                                           "--output",
                                                           "--config",
                                                           "-h",
                                                           "-p",
                                                           "-n",
                                                           "-a",
                                                           "--pass",
                                                           "--user",
                                                           "-s",
                                                           "--tls-ca",
                                                           "--cacert",
                                                           "--tls-cert",
                                                           "--cert",
                                                           "--tls-key",
                                                           "--key",
                                                           "--sni",
                                                           "--sentinel",
                                                           "--sentinel-master",
                                                           "--wait-replicas",
                                                           "--note",
                                                           "--history"});
  CHECK_FALSE(rcoord::global_option_takes_value("--url=redis://x"));
  CHECK_FALSE(rcoord::global_option_takes_value("-q"));
  CHECK_FALSE(rcoord::global_option_takes_value("--ttl"));

  std::vector<std::string> config_keys;
  std::vector<std::string> flags;
  for (const auto& o : rcoord::global_options()) {
    if (o.in_config) config_keys.emplace_back(o.key);
    if (!o.takes_value()) flags.emplace_back(o.key);
    CHECK(o.type_name.empty() == !o.takes_value());
  }
  // The "Known keys" of docs/configuration.md: a password, --config itself and
  // --no-auth-warning are not.
  CHECK(config_keys ==
        std::vector<std::string>{
            "url",           "password-file", "timeout", "prefix",   "output",
            "json",          "quiet",         "host",    "port",     "db",
            "user",          "socket",        "tls",     "tls-ca",   "tls-cert",
            "tls-key",       "tls-insecure",  "sni",     "sentinel", "sentinel-master",
            "wait-replicas", "note",          "history"});
  CHECK(flags ==
        std::vector<std::string>{"json", "quiet", "no-auth-warning", "tls", "tls-insecure"});
}

// The options a command line may name (main registers only those with CLI11): a no must
// never be wrong, since an option left out would be refused as unexpected.
std::vector<std::string> named_in(std::vector<std::string> words) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  std::vector<std::string> keys;
  for (const auto& o : rcoord::global_options()) {
    if (o.may_be_named_in(argv)) keys.emplace_back(o.key);
  }
  return keys;
}

TEST_CASE("a command line names the global options it gives, in every spelling") {
  CHECK(named_in({"lock", "acquire", "x"}).empty());
  CHECK(named_in({"-p", "7000", "lock", "acquire", "x"}) == std::vector<std::string>{"port"});
  CHECK(named_in({"-p7000", "lock", "acquire", "x"}) == std::vector<std::string>{"port"});
  CHECK(named_in({"lock", "acquire", "x", "--timeout=3s"}) == std::vector<std::string>{"timeout"});
  CHECK(named_in({"--url", "redis://h", "--history", "5", "ls"}) ==
        std::vector<std::string>{"url", "history"});
  // short options together (-q and -h): both
  CHECK(named_in({"-qh", "localhost", "ping"}) == std::vector<std::string>{"quiet", "host"});
  // the other spellings of one option (redis-cli's --cacert for --tls-ca)
  CHECK(named_in({"--cacert", "ca.pem", "ping"}) == std::vector<std::string>{"tls-ca"});
  // a long word never names a short option, nor a longer name its prefix
  CHECK(named_in({"--urls", "ping"}).empty());
  CHECK(named_in({"--tls-cafile", "ping"}).empty());
  // the command after -- is not ours
  CHECK(named_in({"lock", "run", "x", "--", "cmd", "-p", "--url"}).empty());
}

TEST_CASE("with nothing given, the built-in defaults") {
  World w;
  Settings s = w.resolve();
  CHECK(s.endpoint.host == "127.0.0.1");
  CHECK(s.endpoint.port == 6379);
  CHECK(s.endpoint.db == 0);
  CHECK(s.endpoint.socket_path.empty());
  CHECK(s.endpoint.user.empty());
  CHECK_FALSE(s.endpoint.password);
  CHECK_FALSE(s.endpoint.tls);
  CHECK(s.endpoint.sentinel.sentinels.empty());
  CHECK(s.endpoints.size() == 1);
  CHECK(s.timeout == 2s);
  CHECK(s.prefix == "rcoord:");
  CHECK(s.format == Format::kText);
  CHECK_FALSE(s.quiet);
  CHECK(s.wait_replicas == rcoord::kWaitReplicasAuto);  // SPEC §6: safe by default
  CHECK(w.reads.empty());
}

TEST_CASE("the URL: --url, then RCOORD_URL, then REDIS_URL, then the config file's url") {
  // Every combination of the four sources: the first one present wins.
  const char* hosts[] = {"cli", "rcoord-env", "redis-env", "config"};
  for (int present = 0; present < 16; ++present) {
    CAPTURE(present);
    World w;
    if (present & 1) w.given("url", "redis://cli:1");
    if (present & 2) w.env("RCOORD_URL", "redis://rcoord-env:2");
    if (present & 4) w.env("REDIS_URL", "redis://redis-env:3");
    if (present & 8) w.conf("url", "redis://config:4");
    std::string expected = "127.0.0.1";
    for (int i = 0; i < 4; ++i) {
      if (present & (1 << i)) {
        expected = hosts[i];
        break;
      }
    }
    CHECK(w.endpoint().host == expected);
  }
}

TEST_CASE("an empty environment variable counts as unset") {
  CHECK(World().env("RCOORD_URL", "").env("REDIS_URL", "redis://b").endpoint().host == "b");
  CHECK(World().env("RCOORD_PASSWORD", "").env("REDISCLI_AUTH", "x").password() == "x");
  CHECK_FALSE(World().env("RCOORD_PASSWORD", "").password());
}

TEST_CASE("the password ladder: every rung against every other") {
  // The man page's PRECEDENCE, in rank order; each rung gives its own password.
  const std::function<void(World&)> rungs[] = {
      [](World& w) { w.given("password", "p1"); },
      [](World& w) { w.given("password-file", "/p2").file("/p2", "p2\n"); },
      [](World& w) { w.given("url", "redis://:p3@h"); },
      [](World& w) { w.env("RCOORD_PASSWORD", "p4"); },
      [](World& w) { w.env("REDISCLI_AUTH", "p5"); },
      [](World& w) { w.env("RCOORD_URL", "redis://:p6@h"); },
      [](World& w) { w.conf("password-file", "/p7").file("/p7", "p7"); },
      [](World& w) { w.conf("url", "redis://:p8@h"); },
  };
  for (int present = 0; present < 256; ++present) {
    CAPTURE(present);
    World w;
    std::optional<std::string> expected;
    for (int i = 0; i < 8; ++i) {
      if ((present & (1 << i)) == 0) continue;
      rungs[i](w);
      if (!expected) expected = "p" + std::to_string(i + 1);
    }
    CHECK(w.password() == expected);
  }
}

TEST_CASE("a URL's password counts only when that URL is the one used") {
  // The command line's URL has none: the environment's URL is not used, nor its password.
  CHECK_FALSE(World().given("url", "redis://h").env("RCOORD_URL", "redis://:p@e").password());
  CHECK_FALSE(World().env("REDIS_URL", "redis://h").conf("url", "redis://:p@c").password());
  CHECK(World().env("REDIS_URL", "redis://:p6@h").password() == "p6");
  // A password given on its own outranks the URL's of the same tier.
  CHECK(
      World().conf("url", "redis://:u@h").conf("password-file", "/f").file("/f", "f").password() ==
      "f");
}

TEST_CASE("a password file is read only when needed, once, and its first line only") {
  World unread;
  unread.given("password", "p").given("password-file", "/missing").conf("password-file", "/gone");
  CHECK(unread.password() == "p");
  CHECK(unread.reads.empty());

  World once;
  once.given("url", "redis://app@h").given("password-file", "/pw").file("/pw", "secret\r\nx");
  rcoord::Endpoint ep = once.endpoint();
  CHECK(ep.user == "app");
  CHECK(ep.password == "secret");
  CHECK(once.reads == std::vector<std::string>{"/pw"});

  CHECK(World().given("password-file", "/e").file("/e", "\nsecond").refusal() ==
        "password file '/e' is empty");
  CHECK(World().conf("password-file", "/e").file("/e", "").refusal() ==
        "password file '/e' is empty");
  CHECK(World().given("password-file", "/nope").refusal() == "cannot read /nope");
}

TEST_CASE("userinfo: a bare word is the password, or the user when a password comes apart") {
  rcoord::Endpoint alone = World().given("url", "redis://word@h").endpoint();
  CHECK(alone.user.empty());
  CHECK(alone.password == "word");

  const std::function<void(World&)> outside[] = {
      [](World& w) { w.given("password", "out"); },
      [](World& w) { w.given("password-file", "/f").file("/f", "out"); },
      [](World& w) { w.env("RCOORD_PASSWORD", "out"); },
      [](World& w) { w.env("REDISCLI_AUTH", "out"); },
      [](World& w) { w.conf("password-file", "/f").file("/f", "out"); },
  };
  for (const auto& source : outside) {
    for (bool url_from_env : {false, true}) {
      World w;
      source(w);
      if (url_from_env) {
        w.env("RCOORD_URL", "redis://word@h");
      } else {
        w.given("url", "redis://word@h");
      }
      rcoord::Endpoint ep = w.endpoint();
      CHECK(ep.user == "word");
      CHECK(ep.password == "out");
    }
  }
  rcoord::Endpoint from_config =
      World().conf("url", "redis://word@h").env("RCOORD_PASSWORD", "out").endpoint();
  CHECK(from_config.user == "word");
  CHECK(from_config.password == "out");

  // --user names the user: the word is then the password, or dropped for one given apart.
  rcoord::Endpoint with_user =
      World().given("url", "redis://word@h").given("user", "bob").endpoint();
  CHECK(with_user.user == "bob");
  CHECK(with_user.password == "word");
  rcoord::Endpoint both = World()
                              .given("url", "redis://word@h")
                              .given("user", "bob")
                              .given("password", "out")
                              .endpoint();
  CHECK(both.user == "bob");
  CHECK(both.password == "out");

  // user:pass@ is never the bare rule: -a only replaces the password.
  rcoord::Endpoint full =
      World().given("url", "redis://alice:pw@h").given("password", "out").endpoint();
  CHECK(full.user == "alice");
  CHECK(full.password == "out");
}

TEST_CASE("-h, -p, -n, -s and --user override the matching part of the URL") {
  rcoord::Endpoint ep = World()
                            .given("url", "redis://alice:pw@urlhost:1111/3")
                            .given("host", "flaghost")
                            .given("port", "2222")
                            .given("db", "4")
                            .given("user", "bob")
                            .endpoint();
  CHECK(ep.host == "flaghost");
  CHECK(ep.port == 2222);
  CHECK(ep.db == 4);
  CHECK(ep.user == "bob");
  CHECK(ep.password == "pw");

  CHECK(World().given("url", "unix:///s.sock").given("host", "h").endpoint().socket_path.empty());
  CHECK(World().given("url", "unix:///s.sock").given("port", "7").endpoint().socket_path.empty());
  CHECK(World().given("url", "redis://h").given("socket", "/x.sock").endpoint().socket_path ==
        "/x.sock");
  // -h after -s: the host wins, as a later part of the same address.
  CHECK(World().given("socket", "/x.sock").given("host", "h").endpoint().socket_path.empty());
  // The flags refine the environment's URL as they do --url's.
  CHECK(World().env("RCOORD_URL", "redis://e:1/2").given("db", "5").endpoint().db == 5);
}

TEST_CASE("the config file's host, port, db, socket and user refine only a URL of its tier") {
  auto with_config_parts = [](World& w) -> World& {
    return w.conf("host", "confhost").conf("port", "7000").conf("db", "6").conf("user", "carol");
  };
  // The default URL, or the config file's own: refined.
  for (bool config_url : {false, true}) {
    World w;
    if (config_url) w.conf("url", "redis://urlhost:1/1");
    rcoord::Endpoint ep = with_config_parts(w).endpoint();
    CHECK(ep.host == "confhost");
    CHECK(ep.port == 7000);
    CHECK(ep.db == 6);
    CHECK(ep.user == "carol");
  }
  CHECK(World().conf("socket", "/c.sock").endpoint().socket_path == "/c.sock");
  // A URL from the command line or the environment: left alone.
  for (bool from_env : {false, true}) {
    World w;
    if (from_env) {
      w.env("REDIS_URL", "redis://urlhost:1/1");
    } else {
      w.given("url", "redis://urlhost:1/1");
    }
    rcoord::Endpoint ep = with_config_parts(w).conf("socket", "/c.sock").endpoint();
    CHECK(ep.host == "urlhost");
    CHECK(ep.port == 1);
    CHECK(ep.db == 1);
    CHECK(ep.user.empty());
    CHECK(ep.socket_path.empty());
  }
  // The command line outranks the config file.
  World w;
  w.given("host", "flaghost").given("port", "1").given("db", "2").given("user", "dave");
  rcoord::Endpoint ep = with_config_parts(w).endpoint();
  CHECK(ep.host == "flaghost");
  CHECK(ep.port == 1);
  CHECK(ep.db == 2);
  CHECK(ep.user == "dave");
}

TEST_CASE("bad host, port and db values are usage errors naming them") {
  CHECK(World().given("host", "a b").refusal() == "bad host 'a b'");
  CHECK(World().conf("host", "a/b").refusal() == "bad host 'a/b'");
  CHECK(World().conf("port", "0").refusal() == "bad port '0'");
  CHECK(World().conf("port", "65536").refusal() == "bad port '65536'");
  CHECK(World().conf("port", "0x10").refusal() == "bad port '0x10'");
  CHECK(World().conf("port", "010").endpoint().port == 10);
  CHECK(World().conf("db", "x").refusal() == "bad db 'x'");
  CHECK(World().conf("db", "1000001").refusal() == "bad db '1000001'");
}

TEST_CASE("timeout: --timeout, then the config file, then 2s; never zero") {
  CHECK(World().given("timeout", "5s").conf("timeout", "7s").resolve().timeout == 5s);
  CHECK(World().conf("timeout", "7s").resolve().timeout == 7s);
  CHECK(World().given("timeout", "0").refusal() == "--timeout must be positive");
  CHECK(World().conf("timeout", "0ms").refusal() == "--timeout must be positive");
  CHECK(World().conf("timeout", "soon").refusal() == "bad timeout in the config file 'soon'");
}

TEST_CASE("prefix: --prefix, then the config file, then rcoord:; no braces") {
  CHECK(World().given("prefix", "a:").conf("prefix", "b:").resolve().prefix == "a:");
  CHECK(World().conf("prefix", "b:").resolve().prefix == "b:");
  CHECK(World().given("prefix", "").resolve().prefix.empty());
  CHECK(World().given("prefix", "a{").refusal() == "--prefix 'a{' holds a '{' or '}'");
  CHECK(World().conf("prefix", "b}").refusal() ==
        "prefix in the config file 'b}' holds a '{' or '}'");
}

TEST_CASE("wait-replicas: --wait-replicas, then the config file, then auto") {
  CHECK(World().given("wait-replicas", "2").conf("wait-replicas", "3").resolve().wait_replicas ==
        2);
  CHECK(World().conf("wait-replicas", "3").resolve().wait_replicas == 3);
  CHECK(World().conf("wait-replicas", "0").resolve().wait_replicas == 0);
  CHECK(World().conf("wait-replicas", "auto").resolve().wait_replicas == rcoord::kWaitReplicasAuto);
  CHECK(World().resolve().wait_replicas == rcoord::kWaitReplicasAuto);
  CHECK(World().conf("wait-replicas", "1001").refusal() ==
        "bad wait-replicas in the config file '1001'");
  CHECK(World().conf("wait-replicas", "many").refusal() ==
        "bad wait-replicas in the config file 'many'");
}

TEST_CASE("history: --history, then the config file, then 100; 0 records nothing") {
  CHECK(World().resolve().history == 100);
  CHECK(World().given("history", "0").conf("history", "5").resolve().history == 0);
  CHECK(World().conf("history", "5").resolve().history == 5);
  CHECK(World().conf("history", "10001").refusal() == "bad history in the config file '10001'");
}

TEST_CASE("note: --note, then RCOORD_NOTE, then the config file, then the CI run's link") {
  auto github = [](World w) {
    return w.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_SERVER_URL", "https://github.example")
        .env("GITHUB_REPOSITORY", "ops/batch")
        .env("GITHUB_RUN_ID", "991");
  };
  CHECK(World().resolve().note.empty());
  CHECK(github(World().given("note", "cli").env("RCOORD_NOTE", "env").conf("note", "file"))
            .resolve()
            .note == "cli");
  CHECK(github(World().env("RCOORD_NOTE", "env").conf("note", "file")).resolve().note == "env");
  CHECK(github(World().conf("note", "file")).resolve().note == "file");
  CHECK(github(World()).resolve().note == "https://github.example/ops/batch/actions/runs/991");
  // Half a GitHub environment is no link; GitLab needs GITLAB_CI with its job URL.
  CHECK(World().env("GITHUB_ACTIONS", "true").env("GITHUB_RUN_ID", "1").resolve().note.empty());
  CHECK(World().env("CI_JOB_URL", "https://gl.example/j/7").resolve().note.empty());
  CHECK(
      World().env("GITLAB_CI", "true").env("CI_JOB_URL", "https://gl.example/j/7").resolve().note ==
      "https://gl.example/j/7");
  CHECK(World().env("BUILDKITE_BUILD_URL", "https://bk.example/b/5").resolve().note ==
        "https://bk.example/b/5");
  CHECK(World()
            .env("BUILDKITE_BUILD_URL", "https://bk.example/b/5")
            .env("BUILDKITE_JOB_ID", "j1")
            .resolve()
            .note == "https://bk.example/b/5#j1");
}

TEST_CASE("note: at most 1 KiB, as every event copies it; a CI link that long is cut") {
  std::string kib(rcoord::kMaxNoteBytes, 'n');
  CHECK(World().given("note", kib).resolve().note == kib);
  CHECK(World().given("note", kib + "x").refusal() ==
        "--note is 1025 bytes, more than the 1024 a note may have");
  CHECK(World().env("RCOORD_NOTE", kib + "x").refusal().starts_with("$RCOORD_NOTE is 1025 bytes"));
  CHECK(World().conf("note", kib + "x").refusal().starts_with("note in the config file is 1025"));
  // A link built from the CI's own variables is cut, at a character boundary.
  std::string long_url = "https://bk.example/" + std::string(1000, 'b') + "\u00e9\u00e9\u00e9";
  std::string note = World().env("BUILDKITE_BUILD_URL", long_url).resolve().note;
  CHECK(note.size() <= rcoord::kMaxNoteBytes);
  CHECK(note.size() >= rcoord::kMaxNoteBytes - 1);
  CHECK(long_url.starts_with(note));
  CHECK((static_cast<unsigned char>(note.back()) & 0xc0) != 0xc0);  // not half a character
}

TEST_CASE("output: -o and --json, then the config file's json and output") {
  auto format = [](World& w) { return w.resolve().format; };
  World w1;
  CHECK(format(w1.given("output", "json")) == Format::kJson);
  World w2;
  CHECK(format(w2.given("output", "text").conf("output", "json")) == Format::kText);
  World w3;
  CHECK(format(w3.given("json")) == Format::kJson);
  World w4;  // --json is -o json: both given, json
  CHECK(format(w4.given("output", "text").given("json")) == Format::kJson);
  World w5;
  CHECK(format(w5.given("output", "text").conf("json", "true")) == Format::kText);
  World w6;
  CHECK(format(w6.conf("json", "true").conf("output", "text")) == Format::kJson);
  World w7;
  CHECK(format(w7.conf("json", "false").conf("output", "json")) == Format::kJson);
  World w8;
  CHECK(format(w8.conf("json", "0")) == Format::kText);
  CHECK(World().conf("output", "xml").refusal() == "bad output 'xml' in the config file");
  CHECK(World().conf("json", "yes").refusal() == "bad config value for json: 'yes'");
}

TEST_CASE("quiet: -q, then the config file") {
  CHECK(World().given("quiet").resolve().quiet);
  CHECK(World().conf("quiet", "true").resolve().quiet);
  CHECK(World().conf("quiet", "1").resolve().quiet);
  CHECK_FALSE(World().conf("quiet", "false").resolve().quiet);
  CHECK(World().conf("quiet", "maybe").refusal() == "bad config value for quiet: 'maybe'");
}

TEST_CASE("TLS: rediss:// or --tls, its files checked before any connection") {
  CHECK(World().given("url", "rediss://h").endpoint().tls);
  CHECK(World().given("tls").endpoint().tls);
  CHECK(World().conf("tls", "true").endpoint().tls);
  rcoord::Endpoint ep = World()
                            .given("tls")
                            .given("tls-ca", "/ca.pem")
                            .conf("tls-ca", "/other.pem")
                            .conf("tls-cert", "/c.pem")
                            .conf("tls-key", "/k.pem")
                            .conf("sni", "name")
                            .conf("tls-insecure", "true")
                            .file("/ca.pem", "")
                            .file("/c.pem", "")
                            .file("/k.pem", "")
                            .endpoint();
  CHECK(ep.tls_settings.ca_file == "/ca.pem");
  CHECK(ep.tls_settings.cert_file == "/c.pem");
  CHECK(ep.tls_settings.key_file == "/k.pem");
  CHECK(ep.tls_settings.sni == "name");
  CHECK(ep.tls_settings.insecure);

  CHECK(World().given("sni", "x").refusal() == "TLS options given for a plain redis:// connection");
  CHECK(World().conf("tls-insecure", "true").refusal() ==
        "TLS options given for a plain redis:// connection");
  CHECK(World().given("tls").given("tls-ca", "/nope").refusal() ==
        "cannot read the --tls-ca file '/nope': No such file or directory");
  CHECK(World().given("tls").given("tls-key", "/k").file("/k", "").refusal() ==
        "--tls-key given without --tls-cert");
  CHECK(World().given("tls").given("socket", "/s.sock").refusal() ==
        "TLS over a unix socket is not supported");
  CHECK(World().conf("tls", "on").refusal() == "bad config value for tls: 'on'");
}

TEST_CASE("Sentinel: --sentinel and --sentinel-master, or the config file's") {
  rcoord::Endpoint ep = World()
                            .given("sentinel", "s1:26379")
                            .given("sentinel", "s2:26380")
                            .conf("sentinel", "c:1")
                            .conf("sentinel-master", "main")
                            .endpoint();
  REQUIRE(ep.sentinel.sentinels.size() == 2);
  CHECK(ep.sentinel.sentinels[1] == std::pair<std::string, int>{"s2", 26380});
  CHECK(ep.sentinel.master == "main");
  World from_config;
  from_config.conf("sentinel", "c:1").conf("sentinel", "d:2").conf("sentinel-master", "m");
  CHECK(from_config.endpoint().sentinel.sentinels.size() == 2);
  CHECK(World().given("sentinel-master", "m").conf("sentinel-master", "n").refusal() ==
        "--sentinel-master given without --sentinel");
  CHECK(World().conf("sentinel", "c:1").refusal() == "--sentinel given without --sentinel-master");
  CHECK(World()
            .given("sentinel", "c:1")
            .given("sentinel-master", "m")
            .given("socket", "/s")
            .refusal() == "--sentinel cannot be combined with a unix socket");
}

TEST_CASE("the config file takes the long names of the global options, no others") {
  for (const char* key : {"password", "config", "no-auth-warning", "passwd", "pass"}) {
    CAPTURE(key);
    CHECK(World().conf(key, "x").refusal() ==
          std::string("unknown key '") + key + "' in config file /etc/rcoord.toml");
  }
  // A key may be a misplaced secret: shown masked.
  CHECK(World().conf("redis://:hunter2@h", "x").refusal() ==
        "unknown key 'redis://:****@h' in config file /etc/rcoord.toml");
}

TEST_CASE("several --url: only for a command that takes them, three or more") {
  auto three = [](World& w) -> World& {
    return w.given("url", "redis://a:1").given("url", "redis://b:2").given("url", "redis://c:3");
  };
  World sem;
  sem.command = {"sem", false};
  CHECK(three(sem).refusal() == "several --url make a Redlock; only `lock` supports it, not `sem`");
  World two;
  two.takes_several_urls().given("url", "redis://a").given("url", "redis://b");
  CHECK(two.refusal() == "a Redlock needs 3 or more --url (independent masters), not 2");
  for (auto [key, flag] :
       {std::pair{"host", "-h"}, {"port", "-p"}, {"socket", "-s"}, {"db", "-n"}}) {
    World w;
    three(w.takes_several_urls()).given(key, key == std::string("host") ? "h" : "1");
    CHECK(w.refusal() == std::string(flag) + " cannot apply to several --url");
  }
  World sentinel;
  three(sentinel.takes_several_urls()).given("sentinel", "s:1");
  CHECK(sentinel.refusal() ==
        "--sentinel and --wait-replicas do not apply to a Redlock (independent masters)");
  World twice;
  twice.takes_several_urls()
      .given("url", "redis://a:1")
      .given("url", "redis://b:2")
      .given("url", "redis://A:1");
  CHECK(twice.refusal() == "A:1 is given twice in --url: a Redlock needs independent masters");
}

TEST_CASE("several --url: a password and --user given apart fill the URLs without one") {
  World w;
  w.takes_several_urls()
      .given("url", "redis://a:1")
      .given("url", "redis://:own@b:2")
      .given("url", "redis://word@c:3")
      .given("url", "redis://zed:zpw@d:4")
      .given("user", "bob")
      .env("RCOORD_PASSWORD", "shared")
      .env("RCOORD_URL", "redis://ignored:9");
  Settings s = w.resolve();
  REQUIRE(s.endpoints.size() == 4);
  CHECK(s.endpoint.host == "a");
  CHECK(s.endpoints[0].password == "shared");
  CHECK(s.endpoints[0].user == "bob");
  CHECK(s.endpoints[1].password == "own");
  CHECK(s.endpoints[1].user == "bob");
  CHECK(s.endpoints[2].password == "shared");  // a bare word is that node's user
  CHECK(s.endpoints[2].user == "word");
  CHECK(s.endpoints[3].password == "zpw");
  CHECK(s.endpoints[3].user == "zed");

  World alone;
  alone.takes_several_urls()
      .given("url", "redis://word@a")
      .given("url", "redis://b")
      .given("url", "rediss://c")
      .given("tls-insecure");
  CHECK(alone.refusal() == "TLS options given for a plain redis:// connection");
}

TEST_CASE("the config file: --config, then RCOORD_CONFIG, then ~/.config/rcoord/config.toml") {
  World w;
  w.env("HOME", "/home/u");
  Environment env = w.environment();
  CHECK(rcoord::config_file_path(w.cli, env).empty());  // the default does not exist
  w.file("/home/u/.config/rcoord/config.toml", "");
  CHECK(rcoord::config_file_path(w.cli, env) == "/home/u/.config/rcoord/config.toml");
  w.env("RCOORD_CONFIG", "/env.toml");
  CHECK(rcoord::config_file_path(w.cli, env) == "/env.toml");
  w.given("config", "/flag.toml");
  CHECK(rcoord::config_file_path(w.cli, env) == "/flag.toml");

  World no_home;
  no_home.env("HOME", "").file("/.config/rcoord/config.toml", "");
  CHECK(rcoord::config_file_path(no_home.cli, no_home.environment()).empty());
}
