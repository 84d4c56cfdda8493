// Tokens, keys, config files, error lines and the printers' views of lock results.

#include <doctest/doctest.h>

#include <set>
#include <string>

#include "config.hpp"
#include "errors.hpp"
#include "keys.hpp"
#include "lock_command.hpp"
#include "ops_command.hpp"
#include "redlock.hpp"
#include "token.hpp"

TEST_CASE("random tokens are 128 bits of hex and do not repeat") {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string t = rcoord::random_token();
    CHECK(t.size() == 32);
    CHECK(t.find_first_not_of("0123456789abcdef") == std::string::npos);
    seen.insert(t);
  }
  CHECK(seen.size() == 1000);
}

TEST_CASE("all keys of one object share one hash tag") {
  rcoord::Keys keys("rcoord:");
  CHECK(keys.object("lock", "backup") == "rcoord:{lock:backup}");
  CHECK(keys.aux("lock", "backup", "fence") == "rcoord:{lock:backup}:fence");
  CHECK(rcoord::Keys("app1:").object("lock", "x") == "app1:{lock:x}");
  CHECK_THROWS_AS(rcoord::check_name("lock", ""), rcoord::Error);
}

TEST_CASE("exit codes are those of SPEC section 2") {
  CHECK(rcoord::kYes == 0);
  CHECK(rcoord::kNo == 1);
  CHECK(rcoord::kUsage == 2);
  CHECK(rcoord::kConnection == 3);
  CHECK(rcoord::kServer == 4);
  CHECK(rcoord::kLost == 5);
}

TEST_CASE("an error is one line: what failed, then what to do") {
  rcoord::Error e(rcoord::kConnection, "cannot connect to 127.0.0.1:6379: connection refused",
                  "set --url or RCOORD_URL");
  CHECK(rcoord::format_error(e) ==
        "rcoord: cannot connect to 127.0.0.1:6379: connection refused (set --url or RCOORD_URL)");
  rcoord::Error multi(rcoord::kServer, "ERR line one\nline two");
  CHECK(rcoord::format_error(multi).find('\n') == std::string::npos);
}

TEST_CASE("config files: top-level keys, strings, booleans, arrays, comments") {
  auto v = rcoord::parse_config(
      "# defaults\n"
      "url = \"redis://10.0.0.5:6379/2\"\n"
      "timeout = '500ms'   # literal string\n"
      "quiet = true\n"
      "db = 3\n"
      "url2 = [\"a\", 'b' ]\n"
      "escaped = \"a\\\"b\"\n",
      "test.toml");
  CHECK(v["url"] == std::vector<std::string>{"redis://10.0.0.5:6379/2"});
  CHECK(v["timeout"].front() == "500ms");
  CHECK(v["quiet"].front() == "true");
  CHECK(v["db"].front() == "3");
  CHECK(v["url2"] == std::vector<std::string>{"a", "b"});
  CHECK(v["escaped"].front() == "a\"b");
}

TEST_CASE("bad config files are usage errors naming file and line") {
  for (const char* bad : {"[section]\n", "url\n", "url = \"unterminated\n", "url = bare word\n",
                          "= 1\n", "x = [\"a\" \"b\"]\n"}) {
    CAPTURE(bad);
    try {
      rcoord::parse_config(bad, "c.toml");
      FAIL("accepted");
    } catch (const rcoord::Error& e) {
      CHECK(e.code() == rcoord::kUsage);
      CHECK(std::string(e.what()).find("c.toml:1") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(rcoord::load_config("/nonexistent/rcoord.toml"), rcoord::Error);
}

TEST_CASE("a config value that may be a secret is never shown in an error") {
  auto message = [](const char* text) {
    try {
      rcoord::parse_config(text, "c.toml");
    } catch (const rcoord::Error& e) {
      return format_error(e);
    }
    return std::string("(accepted)");
  };
  for (const char* bad :
       {"password = S3cret\n", "pass = S3cret\n", "requirepass=S3cret\n", "auth_token = S3cret\n",
        "Password = S3cret # x\n", "password = [S3cret]\n", "tls-key = S3cret\n"}) {
    CAPTURE(bad);
    std::string m = message(bad);
    CHECK(m.find("c.toml:1") != std::string::npos);
    CHECK(m.find("S3cret") == std::string::npos);
    CHECK(m.find("not shown") != std::string::npos);
  }
  // Other values are shown, URLs masked, so that the mistake can be found.
  CHECK(message("prefix = app\n").find("'app' is not a value") != std::string::npos);
  std::string url = message("url = redis://:S3cret@h\n");
  CHECK(url.find("S3cret") == std::string::npos);
  CHECK(url.find("redis://") != std::string::npos);
}

TEST_CASE("lock acquire: JSON fields and text of SPEC") {
  rcoord::lock::Acquired ok{true, "backup", "abc", 30000, 7, 12};
  nlohmann::ordered_json j;
  to_json(j, ok);
  CHECK(
      j.dump() ==
      R"({"acquired":true,"name":"backup","token":"abc","ttl_ms":30000,"fence":7,"waited_ms":12})");
  CHECK(to_text(ok) == "abc");  // TOKEN=$(rcoord lock acquire x) captures the token

  rcoord::lock::Acquired busy{false, "backup", "", 1234, 0, 0};
  to_json(j, busy);
  CHECK(j.dump() == R"({"acquired":false,"name":"backup","ttl_ms":1234})");
  CHECK(to_text(busy).empty());
}

TEST_CASE("lock status: field: value lines with the JSON names") {
  rcoord::lock::Status s{true, "backup", "abc", 900, 3, "exclusive", 0};
  CHECK(
      to_text(s) ==
      "held: true\nname: backup\ntoken: abc\nttl_ms: 900\nfence: 3\nmode: exclusive\nreaders: 0\n");
  nlohmann::ordered_json j;
  to_json(j, s);
  CHECK(
      j.dump() ==
      R"({"held":true,"name":"backup","token":"abc","ttl_ms":900,"fence":3,"mode":"exclusive","readers":0})");
}

TEST_CASE("lock views: a Redlock's votes follow the single-server fields, and only then") {
  using rcoord::lock::Votes;
  nlohmann::ordered_json j;
  rcoord::lock::Acquired ok{true, "backup", "abc", 30000, 7, 12};
  ok.votes = Votes{5, 3, 4, 29000};
  to_json(j, ok);
  CHECK(j.dump() == R"({"acquired":true,"name":"backup","token":"abc","ttl_ms":30000,"fence":7,)"
                    R"("waited_ms":12,"nodes":5,"quorum":3,"acquired_on":4,"validity_ms":29000})");
  CHECK(to_text(ok) == "abc");

  rcoord::lock::Released gone{true, "backup", Votes{5, 3, 5, 0}};
  to_json(j, gone);
  CHECK(j.dump() == R"({"released":true,"name":"backup","nodes":5,"quorum":3,"released_on":5})");
  gone.votes.reset();
  to_json(j, gone);
  CHECK(j.dump() == R"({"released":true,"name":"backup"})");

  rcoord::lock::Extended longer{true, "backup", 60000, 7, Votes{3, 2, 3, 59000}};
  CHECK(to_text(longer) == "ttl_ms: 60000\nvalidity_ms: 59000");
  longer.votes.reset();
  CHECK(to_text(longer) == "ttl_ms: 60000");

  rcoord::lock::Broken broken{true, "backup", "abc", 0, Votes{3, 2, 2, 0}};
  to_json(j, broken);
  CHECK(j.dump() ==
        R"({"broken":true,"name":"backup","token":"abc","readers":0,"nodes":3,"broken_on":2})");

  rcoord::lock::Status s{true, "backup", "abc", 900, 3, "exclusive", 0};
  s.votes = Votes{3, 2, 3, 880};
  CHECK(to_text(s) ==
        "held: true\nname: backup\ntoken: abc\nttl_ms: 900\nfence: 3\nmode: exclusive\n"
        "readers: 0\nnodes: 3\nquorum: 2\nacquired_on: 3\nvalidity_ms: 880\n");
}

TEST_CASE("JSON output survives binary names") {
  rcoord::lock::Status s{false, std::string("bad\xff\xfe", 5), "", 0, 0, "", 0};
  nlohmann::ordered_json j;
  to_json(j, s);
  std::string line = rcoord::dump_json(j);
  CHECK(line.find("bad\xef\xbf\xbd") != std::string::npos);  // U+FFFD replaces bad bytes
}

TEST_CASE("ping view") {
  rcoord::server::Ping p{"127.0.0.1:6379", "7.0.15", "standalone", 85, {}, "Redis 7.0.15"};
  CHECK(to_text(p) ==
        "url: 127.0.0.1:6379\nserver: Redis 7.0.15\nversion: 7.0.15\nmode: standalone\n"
        "rtt_us: 85\n");
  nlohmann::ordered_json j;
  to_json(j, p);
  CHECK(j.dump() == R"({"url":"127.0.0.1:6379","server":"Redis 7.0.15","version":"7.0.15",)"
                    R"("mode":"standalone","rtt_ms":1,"rtt_us":85})");
}

TEST_CASE("the server's flavour, version and mode from INFO server") {
  using rcoord::server::parse_info;
  auto redis = parse_info("# Server\r\nredis_version:6.2.16\r\nredis_mode:standalone\r\n");
  CHECK(rcoord::server::server_in(redis) == "Redis 6.2.16");
  CHECK(rcoord::server::version_in(redis) == "6.2.16");
  CHECK(rcoord::server::mode_in(redis) == "standalone");
  // Valkey says redis_version:7.2.4 for clients that test it, and its mode is server_mode
  // unless extended-redis-compatibility is on.
  auto valkey = parse_info(
      "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n"
      "server_mode:cluster\r\n");
  CHECK(rcoord::server::server_in(valkey) == "Valkey 8.0.1");
  CHECK(rcoord::server::version_in(valkey) == "8.0.1");
  CHECK(rcoord::server::mode_in(valkey) == "cluster");
  CHECK(rcoord::server::server_in(parse_info("# Server\r\n")).empty());
}

TEST_CASE("ping view of a setup of several servers: one node line each") {
  rcoord::server::Ping p{"10.0.0.5:6379", "7.0.15", "sentinel", 210, {}, "Redis 7.0.15"};
  p.nodes.push_back({"10.0.0.5:6379", "master", 210, {}});
  p.nodes.push_back({"10.0.0.8:26379", "sentinel", -1, "connection refused"});
  CHECK(to_text(p) ==
        "url: 10.0.0.5:6379\nserver: Redis 7.0.15\nversion: 7.0.15\nmode: sentinel\n"
        "rtt_us: 210\nnodes: 2\n"
        "node: 10.0.0.5:6379 master rtt_us=210\n"
        "node: 10.0.0.8:26379 sentinel down (connection refused)\n");
  nlohmann::ordered_json j;
  to_json(j, p);
  CHECK(j["nodes"].size() == 2);
  CHECK(j["rtt_ms"] == 1);  // 210 us, rounded up: never 0 for a round trip that took time
  CHECK(j["nodes"][0]["rtt_ms"] == 1);
  CHECK(j["nodes"][1]["rtt_ms"] == -1);
  CHECK(j["nodes"][1]["rtt_us"] == -1);
  CHECK(j["nodes"][1]["error"] == "connection refused");
}

TEST_CASE("Redlock: two URLs that reach one address are one server") {
  auto at = [](std::string host, int port) {
    rcoord::Endpoint ep;
    ep.host = std::move(host);
    ep.port = port;
    return ep;
  };
  using rcoord::redlock::same_address;
  CHECK_FALSE(same_address({at("127.0.0.1", 7001), at("127.0.0.1", 7002), at("127.0.0.1", 7003)}));
  for (const char* alias : {"127.1", "::ffff:127.0.0.1", "localhost", "127.000.000.001"}) {
    CAPTURE(alias);
    auto same = same_address({at("127.0.0.1", 7001), at("127.0.0.1", 7002), at(alias, 7001)});
    REQUIRE(same);
    CHECK(same->first == 0);
    CHECK(same->second == 2);
    CHECK(same->address == "127.0.0.1:7001");
  }
  rcoord::Endpoint sock = at("", 0);
  sock.socket_path = "/nonexistent/redis.sock";
  auto same = same_address({sock, at("127.0.0.1", 7001), sock});
  REQUIRE(same);
  CHECK(same->second == 2);
  CHECK(same->address == "unix:/nonexistent/redis.sock");
}

TEST_CASE("ls text: NAME padded to a column, a name with a space or a quote quoted") {
  using rcoord::cmd::listed_line;
  using rcoord::cmd::listed_name;
  CHECK(listed_name("deploy") == "deploy");
  CHECK(listed_name("nightly backup") == "'nightly backup'");
  CHECK(listed_name("it's") == "'it'\\''s'");
  CHECK(listed_name("a\nb") == "a\\nb");  // escaped, one line; no space: no quotes
  rcoord::inventory::Object lock;
  lock.type = "lock";
  lock.name = "my job";
  lock.state = "held by a@b (pid 1, x) for 3m28s";
  rcoord::inventory::Object sem;
  sem.type = "sem";
  sem.name = "encoders";
  sem.state = "2 of 2 permit(s) in use";
  // Each name padded to the widest of the listing (10 columns here), then two spaces.
  CHECK(listed_line(lock, 10) == "lock      'my job'    held by a@b (pid 1, x) for 3m28s");
  CHECK(listed_line(sem, 10) == "sem       encoders    2 of 2 permit(s) in use");
  CHECK(listed_line(sem, 3) == "sem       encoders  2 of 2 permit(s) in use");  // never cut
}
