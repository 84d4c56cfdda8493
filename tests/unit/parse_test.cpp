// Durations, rates and URLs: the strict parsers every option goes through.

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "duration.hpp"
#include "errors.hpp"
#include "url.hpp"
#include "waiting.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;

namespace {
// A URL parse_url must refuse: a usage error in one line.
void check_refused_url(const char* bad) {
  CAPTURE(bad);
  try {
    rcoord::parse_url(bad);
    FAIL("accepted");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kUsage);
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
}
}  // namespace

TEST_CASE("parse_duration accepts the documented forms") {
  CHECK(rcoord::parse_duration("250ms") == 250ms);
  CHECK(rcoord::parse_duration("30s") == 30s);
  CHECK(rcoord::parse_duration("5m") == 5min);
  CHECK(rcoord::parse_duration("1h") == 1h);
  CHECK(rcoord::parse_duration("1h30m") == 90min);
  CHECK(rcoord::parse_duration("1m30s500ms") == 90500ms);
  CHECK(rcoord::parse_duration("7") == 7s);  // a bare number means seconds
  CHECK(rcoord::parse_duration("1.5s") == 1500ms);
  CHECK(rcoord::parse_duration("0.25") == 250ms);
  CHECK(rcoord::parse_duration("0") == 0ms);
  CHECK(rcoord::parse_duration("1ms") == 1ms);
  CHECK(rcoord::parse_duration("1.4ms") == 1ms);  // rounded past the first millisecond
}

TEST_CASE("parse_duration: durations count whole milliseconds, none is between 0 and 1ms") {
  for (const char* short_one : {"0.5ms", "0.9ms", "0.0001s", "0.00001m"}) {
    CAPTURE(short_one);
    CHECK_FALSE(rcoord::parse_duration(short_one));
    CHECK(rcoord::duration_too_short(short_one));
  }
  CHECK_FALSE(rcoord::duration_too_short("0"));
  CHECK_FALSE(rcoord::duration_too_short("5x"));
  try {
    rcoord::duration_or_throw("--ttl", "0.5ms");
    FAIL("accepted");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kUsage);
    CHECK(std::string(e.what()) ==
          "--ttl '0.5ms' is too short: durations count whole milliseconds");
  }
}

TEST_CASE("parse_duration rejects everything else") {
  for (const char* bad :
       {"", "10 s", " 10s", "10s ", "-5s", "5x", "s", "1h30", "ms", ".", "1..5s", "5sec", "1e3",
        "forever", "99999999999999999999s", "1d", "inf", "30m1h", "1s1s"}) {
    CAPTURE(bad);
    CHECK_FALSE(rcoord::parse_duration(bad));
  }
}

TEST_CASE("block_seconds: a blocking pop's timeout, never one Redis 6.2 reads as forever") {
  CHECK(rcoord::waiting::block_seconds(Millis(250)) == "0.250");
  CHECK(rcoord::waiting::block_seconds(Millis(61'005)) == "61.005");
  CHECK(rcoord::waiting::block_seconds(Millis(1)) == "0.002");
  CHECK(rcoord::waiting::block_seconds(Millis(0)) == "0.002");
}

TEST_CASE("parse_wait adds forever") {
  CHECK(rcoord::parse_wait("forever") == Millis::max());
  CHECK(rcoord::parse_wait("2s") == 2s);
  CHECK_FALSE(rcoord::parse_wait("never"));
  CHECK_FALSE(rcoord::parse_wait("inf"));
}

TEST_CASE("duration_or_throw is a usage error naming the option and the value") {
  try {
    rcoord::duration_or_throw("--ttl", "5x");
    FAIL("no throw");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kUsage);
    CHECK(std::string(e.what()).find("--ttl") != std::string::npos);
    CHECK(std::string(e.what()).find("'5x'") != std::string::npos);
  }
}

TEST_CASE("parse_rate needs a count and a period") {
  CHECK(rcoord::parse_rate("10/s") == rcoord::Rate{10, 1s});
  CHECK(rcoord::parse_rate("100/m") == rcoord::Rate{100, 1min});
  CHECK(rcoord::parse_rate("5/h") == rcoord::Rate{5, 1h});
  CHECK(rcoord::parse_rate("100/10s") == rcoord::Rate{100, 10s});
  CHECK(rcoord::parse_rate("0/s") == rcoord::Rate{0, 1s});
  for (const char* bad : {"5", "/s", "5/", "5/0s", "5/x", "-5/s", "5.5/s", "5/s/s", "a/s", ""}) {
    CAPTURE(bad);
    CHECK_FALSE(rcoord::parse_rate(bad));
  }
  CHECK_THROWS_AS(rcoord::rate_or_throw("--rate", "5"), rcoord::Error);
}

TEST_CASE("format_duration prints the shortest exact form") {
  CHECK(rcoord::format_duration(1500ms) == "1500ms");
  CHECK(rcoord::format_duration(90s) == "90s");
  CHECK(rcoord::format_duration(2min) == "2m");
  CHECK(rcoord::format_duration(0ms) == "0s");
}

TEST_CASE("plausible_host refuses what no host holds, as in a URL") {
  for (const char* good : {"127.0.0.1", "localhost", "redis-1.example", "::1"}) {
    CAPTURE(good);
    CHECK(rcoord::plausible_host(good));
  }
  using namespace std::string_literals;
  for (const auto& bad :
       {""s, "a b"s, "a\nb"s, "127.0.0.1\n"s, "a\tb"s, "a\x7f"s, "a\0b"s, "a/b"s, "u@h"s}) {
    CAPTURE(bad);
    CHECK_FALSE(rcoord::plausible_host(bad));
  }
  check_refused_url("redis://a%0ab:1");  // the same check, through a URL
}

TEST_CASE("parse_url reads redis:// URLs") {
  auto ep = rcoord::parse_url("redis://127.0.0.1:6380/3");
  CHECK(ep.host == "127.0.0.1");
  CHECK(ep.port == 6380);
  CHECK(ep.db == 3);
  CHECK_FALSE(ep.password);

  ep = rcoord::parse_url("redis://alice:s%3Acret@localhost");
  CHECK(ep.user == "alice");
  CHECK(ep.password == "s:cret");
  CHECK(ep.host == "localhost");
  CHECK(ep.port == 6379);

  ep = rcoord::parse_url("redis://onlypass@h:1");
  CHECK(ep.user.empty());
  CHECK(ep.password == "onlypass");
  CHECK(ep.bare_userinfo);
  CHECK_FALSE(rcoord::parse_url("redis://alice:pw@h").bare_userinfo);
  CHECK_FALSE(rcoord::parse_url("redis://:pw@h").bare_userinfo);

  ep = rcoord::parse_url("redis://[::1]:7000");
  CHECK(ep.host == "::1");
  CHECK(ep.port == 7000);
  CHECK(ep.describe() == "[::1]:7000");

  ep = rcoord::parse_url("redis://");
  CHECK(ep.host == "127.0.0.1");
  CHECK(ep.port == 6379);

  ep = rcoord::parse_url("rediss://h:6380");
  CHECK(ep.tls);
}

TEST_CASE("parse_url reads unix:// URLs") {
  auto ep = rcoord::parse_url("unix:///run/redis/redis.sock?db=2");
  CHECK(ep.socket_path == "/run/redis/redis.sock");
  CHECK(ep.db == 2);
  CHECK(ep.describe() == "/run/redis/redis.sock");
}

TEST_CASE("parse_url rejects hostile and malformed URLs with a usage error") {
  for (const char* bad : {"localhost:6379", "http://h", "redis://h:0", "redis://h:65536",
                          "redis://h:port", "redis://[::1", "redis://[::1]x", "redis://h/db",
                          "redis://h:-1", "redis://h/%zz", "redis://a%2@h", "unix://relative.sock",
                          "redis://h?foo=bar", "redis://h:99999999999", "redis://h h:1"}) {
    check_refused_url(bad);
  }
  std::string huge = "redis://" + std::string(10'000, 'a');
  CHECK_THROWS_AS(rcoord::parse_url(huge), rcoord::Error);
}

TEST_CASE("a bare word@ in a URL is the ACL user when a password comes from elsewhere") {
  // No other password: the word is the default user's password (as in redis-cli).
  auto ep = rcoord::parse_url("redis://alice@h");
  rcoord::take_bare_user(ep, std::nullopt);
  CHECK(ep.user.empty());
  CHECK(ep.password == "alice");

  ep = rcoord::parse_url("redis://alice@h");
  rcoord::take_bare_user(ep, std::string("from-file"));
  CHECK(ep.user == "alice");
  CHECK(ep.password == "from-file");

  // A user:password URL keeps both whatever else is given.
  ep = rcoord::parse_url("redis://bob:pw@h");
  rcoord::take_bare_user(ep, std::string("from-file"));
  CHECK(ep.user == "bob");
  CHECK(ep.password == "pw");

  // In the URL itself: ?password= makes the word the user, ?user= makes it the password.
  ep = rcoord::parse_url("redis://alice@h?password=s%3Acret");
  CHECK(ep.user == "alice");
  CHECK(ep.password == "s:cret");
  ep = rcoord::parse_url("unix://secret@/tmp/r.sock?user=carol");
  CHECK(ep.user == "carol");
  CHECK(ep.password == "secret");
  rcoord::take_bare_user(ep, std::string("from-file"));
  CHECK(ep.password == "secret");
}

TEST_CASE("a URL's password never shows in messages") {
  CHECK(rcoord::mask_url("redis://bob:hunter2@h:1/0") == "redis://bob:****@h:1/0");
  CHECK(rcoord::mask_url("redis://hunter2@h") == "redis://****@h");
  CHECK(rcoord::mask_url("redis://h:1") == "redis://h:1");
  // An empty password has nothing to hide.
  CHECK(rcoord::mask_url("redis://:@h") == "redis://:@h");
  CHECK(rcoord::mask_url("redis://bob:@h") == "redis://bob:@h");
  CHECK(rcoord::mask_url("redis://@h") == "redis://@h");
  CHECK(rcoord::secret_spans("redis://:@h").empty());
  try {
    rcoord::parse_url("redis://bob:hunter2@h:notaport");
    FAIL("accepted");
  } catch (const rcoord::Error& e) {
    CHECK(std::string(e.what()).find("hunter2") == std::string::npos);
  }
}

TEST_CASE("parse_url reads rediss:// as TLS") {
  auto ep = rcoord::parse_url("rediss://app:secret@redis.internal:6380/3");
  CHECK(ep.tls);
  CHECK(ep.host == "redis.internal");
  CHECK(ep.port == 6380);
  CHECK(ep.db == 3);
  CHECK_FALSE(rcoord::parse_url("redis://redis.internal").tls);
}

TEST_CASE("parse_address reads a sentinel's HOST:PORT") {
  CHECK(rcoord::parse_address("127.0.0.1:26379", "--sentinel") ==
        std::pair<std::string, int>{"127.0.0.1", 26379});
  CHECK(rcoord::parse_address("[::1]:26380", "--sentinel") ==
        std::pair<std::string, int>{"::1", 26380});
  CHECK(rcoord::parse_address("sentinel-a:5000", "--sentinel").first == "sentinel-a");
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "host:99999", ":26379",
                          "[::1:26379", "a b:1"}) {
    CAPTURE(bad);
    try {
      rcoord::parse_address(bad, "--sentinel");
      FAIL("accepted");
    } catch (const rcoord::Error& e) {
      CHECK(e.code() == rcoord::kUsage);
      CHECK(std::string(e.what()).find("--sentinel") != std::string::npos);
    }
  }
}

TEST_CASE("parse_decimal reads decimal only: leading zeros are decimal, no hex or octal") {
  CHECK(rcoord::parse_decimal("10") == 10);
  CHECK(rcoord::parse_decimal("010") == 10);
  CHECK(rcoord::parse_decimal("0") == 0);
  CHECK(rcoord::parse_decimal("9223372036854775807") == INT64_MAX);
  // One rule for signs: none, either way.
  for (const char* bad : {"-5", "-0", "+0", "0x10", "0X10", "+5", " 5", "5 ", "1e3", "1.0", "", "-",
                          "0b1", "10k", "99999999999999999999"}) {
    CAPTURE(bad);
    CHECK_FALSE(rcoord::parse_decimal(bad));
  }
  CHECK(rcoord::is_decimal("99999999999999999999"));  // too large, not malformed
  CHECK_FALSE(rcoord::is_decimal("0x10"));
}

TEST_CASE("parse_decimal_real reads decimal numbers, never hex, inf or nan") {
  CHECK(rcoord::parse_decimal_real("0.01") == doctest::Approx(0.01));
  CHECK(rcoord::parse_decimal_real(".5") == doctest::Approx(0.5));
  CHECK(rcoord::parse_decimal_real("1e-3") == doctest::Approx(0.001));
  CHECK(rcoord::parse_decimal_real("-2") == doctest::Approx(-2));
  CHECK(rcoord::parse_decimal_real("007") == doctest::Approx(7));
  for (const char* bad : {"0x1p-7", "inf", "nan", "1e", ".", "", "1e999", " 1", "1,5", "0x10"}) {
    CAPTURE(bad);
    CHECK_FALSE(rcoord::parse_decimal_real(bad));
  }
}

TEST_CASE("a duration over the limit is too long, not malformed") {
  CHECK(rcoord::parse_duration("87600h") == Millis(87600LL * 3600 * 1000));
  for (const char* long_one : {"87601h", "100000000h", "99999999999999999999",
                               "0000000000000000000000000000000000100000000h"}) {
    CAPTURE(long_one);
    CHECK_FALSE(rcoord::parse_duration(long_one));
    CHECK(rcoord::duration_too_long(long_one));
    try {
      rcoord::duration_or_throw("--ttl", long_one);
      FAIL("accepted");
    } catch (const rcoord::Error& e) {
      CHECK(std::string(e.what()).find("too long") != std::string::npos);
    }
  }
  for (const char* bad : {"5s5s", "-1", "1e9", "abc", "1.0000000000000000000000001s"}) {
    CAPTURE(bad);
    CHECK_FALSE(rcoord::duration_too_long(bad));
  }
  CHECK(rcoord::parse_duration("0000000000000000000001s") == 1s);
}

TEST_CASE("a password never shows, whatever the URL's shape") {
  for (const char* url :
       {"redis//:s3cret@host", "redis:/:s3cret@host", "redis:s3cret@host", ":s3cret@host",
        "redis://u:s3cret/x@host", "redis://u:s3c@ret@host", "redis://u:s3cret?x@host",
        "redis://host?password=s3cret", "redis://host?db=1&password=s3cret&user=u",
        "redis://host?password=s3c@ret", "unix://u:s3cret@/tmp/r.sock", "rediss://s3cret@h:1"}) {
    CAPTURE(url);
    std::vector<std::string> shown_forms{rcoord::mask_url(url)};
    if (std::string(url).find("://") != std::string::npos) {
      shown_forms.push_back(rcoord::mask_urls_in(std::string("bad URL '") + url + "': x"));
    }
    for (const std::string& shown : shown_forms) {
      CHECK(shown.find("s3c") == std::string::npos);
      CHECK(shown.find("ret") == std::string::npos);
      CHECK(shown.find("****") != std::string::npos);
    }
    try {
      rcoord::parse_url(url);
    } catch (const rcoord::Error& e) {
      CHECK(std::string(e.what()).find("s3c") == std::string::npos);
    }
  }
  // The user name stays when the URL is plainly user:password.
  CHECK(rcoord::mask_url("redis://bob:s3cret@h") == "redis://bob:****@h");
  CHECK(rcoord::mask_urls_in("at redis://bob:pw@h and 'rediss://x@y'") ==
        "at redis://bob:****@h and 'rediss://****@y'");
  CHECK(rcoord::mask_urls_in("no URL here, a@b") == "no URL here, a@b");
}

TEST_CASE("hosts: one port, no control bytes; socket paths without NUL") {
  for (const char* bad :
       {"redis://host:1:2", "redis://::1:6379", "redis://a%3Ab:1", "redis://a%00b:1",
        "redis://a%0ab:1", "redis://a%1bb:1", "unix:///tmp/a%00b.sock"}) {
    check_refused_url(bad);
  }
  CHECK(rcoord::parse_url("redis://[::1]:6379").host == "::1");
  CHECK(rcoord::parse_url("redis://host:7").port == 7);
}
