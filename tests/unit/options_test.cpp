// Duration options are parsed once, while argv is parsed, into a checked Millis.
#include "options.hpp"

#include <doctest/doctest.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "errors.hpp"
#include "watch.hpp"

using rcoord::Millis;
using namespace rcoord::cmd;

namespace {

// The usage error that parsing `line` throws (empty when it parses).
std::string usage_error(CLI::App& app, const std::string& line) {
  try {
    app.parse(line, false);
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kUsage);
    return rcoord::format_error(e);
  }
  return {};
}

}  // namespace

TEST_CASE("a duration option holds its default until given, then the parsed value") {
  CLI::App app;
  Millis ttl{30'000};
  add_duration(&app, "--ttl", ttl, "Lease", positive("30s"));
  app.parse("", false);
  CHECK(ttl == Millis(30'000));
  app.parse("--ttl 1h30m", false);
  CHECK(ttl == Millis(5'400'000));
}

TEST_CASE("an optional duration stays unset until given") {
  CLI::App app;
  std::optional<Millis> grace;
  add_duration(&app, "--kill-grace", grace, "Grace");
  app.parse("", false);
  CHECK_FALSE(grace.has_value());
  app.parse("--kill-grace 0", false);  // zero is a duration like any other here
  CHECK(grace == Millis(0));
}

TEST_CASE("a malformed duration is refused by the option's validator, naming the value") {
  CLI::App app;
  Millis ttl{30'000};
  add_duration(&app, "--ttl", ttl, "Lease", positive("30s"));
  CHECK_THROWS_WITH_AS(app.parse("--ttl 5x", false), doctest::Contains("bad duration '5x'"),
                       CLI::ValidationError);
  CHECK_THROWS_WITH_AS(app.parse("--ttl 100000h", false), doctest::Contains("too long"),
                       CLI::ValidationError);
  CHECK(ttl == Millis(30'000));
}

TEST_CASE("a positive duration refuses zero while argv is parsed, saying what to give") {
  CLI::App app;
  Millis ttl{30'000};
  add_duration(&app, "--ttl", ttl, "Lease", positive("30s"));
  CHECK(usage_error(app, "--ttl 0") == "rcoord: --ttl must be positive (use e.g. --ttl 30s)");
  CHECK(usage_error(app, "--ttl 1ms").empty());
  CHECK(ttl == Millis(1));
}

TEST_CASE("the long name of the flags names the option in the message") {
  CLI::App app;
  Millis t{1000};
  add_duration(&app, "-t,--timeout", t, "Timeout", positive("2s"));
  CHECK(usage_error(app, "-t 0") == "rcoord: --timeout must be positive (use e.g. --timeout 2s)");
}

TEST_CASE("a refresh interval refuses anything shorter than 100ms") {
  CLI::App app;
  std::optional<Millis> watch;
  add_watch_option(&app, watch);
  CHECK(usage_error(app, "--watch 50ms") ==
        "rcoord: --watch 50ms is too short: at least 100ms (use e.g. --watch 1s)");
  CHECK(usage_error(app, "--watch 0") ==
        "rcoord: --watch 0 is too short: at least 100ms (use e.g. --watch 1s)");
  CHECK(usage_error(app, "--watch 100ms").empty());
  CHECK(watch == Millis(100));
}

TEST_CASE("a wait option takes forever as Millis::max()") {
  CLI::App app;
  std::optional<Millis> wait;
  add_wait(&app, "--wait", wait, "Wait");
  app.parse("", false);
  CHECK_FALSE(wait.has_value());
  app.parse("--wait forever", false);
  CHECK(wait == Millis::max());
  app.parse("--wait 2.5s", false);
  CHECK(wait == Millis(2500));
  CHECK_THROWS_AS(app.parse("--wait never", false), CLI::ValidationError);
}

TEST_CASE("--expire refuses zero and keeps 0 for not given") {
  CLI::App app;
  Millis expire{0};
  add_expire_option(&app, expire, "the filter");
  app.parse("", false);
  CHECK(expire == Millis(0));
  CHECK_THROWS_WITH_AS(app.parse("--expire 0", false), doctest::Contains("it must be at least 1ms"),
                       CLI::ValidationError);
  app.parse("--expire 48h", false);
  CHECK(expire == Millis(172'800'000));
}

TEST_CASE("format_wait writes forever back as forever") {
  CHECK(rcoord::format_wait(Millis::max()) == "forever");
  CHECK(rcoord::format_wait(Millis(90'000)) == "90s");
}
