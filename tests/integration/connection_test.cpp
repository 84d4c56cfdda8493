// The connection and script layers against real servers: scripts, auth, timeouts, failures.

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "redis_server.hpp"
#include "script.hpp"
#include "timing.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;

TEST_CASE("every embedded script's SHA1 is the one the server computes") {
  auto conn = rcoord::test::shared_server().connect();
  CHECK(std::size(rcoord::lua::kAll) >= 9);
  for (const rcoord::Script* s : rcoord::lua::kAll) {
    CAPTURE(s->name);
    auto r = conn.command({"SCRIPT", "LOAD", std::string(s->body)});
    CHECK(rcoord::reply_string(r.get()) == s->sha1);
  }
}

TEST_CASE("eval falls back to EVAL after the script cache is flushed") {
  auto conn = rcoord::test::shared_server().connect();
  conn.command({"SCRIPT", "FLUSH"});
  std::string key = rcoord::test::unique_prefix() + "{lock:x}";
  auto r = rcoord::eval(conn, rcoord::lua::kLockStatus,
                        {key, key + ":fence", key + ":wake", key + ":readers", key + ":writers",
                         key + ":rwait", key + ":rfence", key + ":rwho"},
                        {});
  CHECK(r->type == REDIS_REPLY_ARRAY);
  auto exists = conn.command({"SCRIPT", "EXISTS", std::string(rcoord::lua::kLockStatus.sha1)});
  CHECK(exists->element[0]->integer == 1);  // EVAL cached it
}

TEST_CASE("pipelined commands come back in order") {
  auto conn = rcoord::test::shared_server().connect();
  std::string key = rcoord::test::unique_prefix() + "counter";
  auto replies = conn.pipeline({{"INCR", key}, {"INCR", key}, {"GET", key}});
  REQUIRE(replies.size() == 3);
  CHECK(rcoord::reply_integer(replies[0].get()) == 1);
  CHECK(rcoord::reply_integer(replies[1].get()) == 2);
  CHECK(rcoord::reply_string(replies[2].get()) == "2");
}

TEST_CASE("a refused connection is a connection error that says what to do") {
  rcoord::Endpoint ep;
  ep.port = rcoord::test::free_port();
  rcoord::Connection conn(ep, Millis(500));
  try {
    conn.command({"PING"});
    FAIL("connected");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kConnection);
    CHECK(std::string(e.what()).find("cannot connect to 127.0.0.1:") != std::string::npos);
    CHECK(e.hint().find("--url") != std::string::npos);
  }
}

TEST_CASE("a paused server gives a connection error within about the timeout") {
  rcoord::test::RedisServer server;
  auto admin = server.connect();
  admin.command({"CLIENT", "PAUSE", "1200", "ALL"});
  auto conn = server.connect(Millis(300));
  auto start = std::chrono::steady_clock::now();
  try {
    conn.command({"GET", "k"});
    FAIL("answered");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kConnection);
    CHECK(std::string(e.what()).find("no reply") != std::string::npos);
  }
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= 300ms);
  CHECK(took < rcoord::test::scaled(1000ms));
  std::this_thread::sleep_for(1000ms);  // let the pause run out
  // The broken socket was dropped: the next command reconnects.
  CHECK(rcoord::reply_string(conn.command({"PING"}).get()) == "PONG");
}

TEST_CASE("ACL users authenticate, and wrong passwords are connection errors") {
  rcoord::test::RedisServer server;
  auto admin = server.connect();
  admin.command({"ACL", "SETUSER", "app", "on", ">s3cret", "~*", "+@all"});
  admin.command({"CONFIG", "SET", "requirepass", "adminpw"});

  rcoord::Endpoint ep = server.endpoint();
  ep.user = "app";
  ep.password = "s3cret";
  rcoord::Connection good(ep, Millis(1000));
  CHECK(rcoord::reply_string(good.command({"ACL", "WHOAMI"}).get()) == "app");

  ep.password = "wrong";
  rcoord::Connection bad(ep, Millis(1000));
  try {
    bad.command({"PING"});
    FAIL("authenticated");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kConnection);
    CHECK(std::string(e.what()).find("authentication failed for user 'app'") != std::string::npos);
    CHECK(std::string(e.what()).find("wrong") == std::string::npos);  // never the password
  }

  rcoord::Connection none(server.endpoint(), Millis(1000));
  try {
    none.command({"PING"});
    FAIL("no auth needed");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kConnection);
  }
}

TEST_CASE("SELECT picks the database, Unix sockets work") {
  auto& server = rcoord::test::shared_server();
  rcoord::Endpoint ep;
  ep.socket_path = server.socket_path();
  ep.db = 5;
  rcoord::Connection conn(ep, Millis(1000));
  std::string key = rcoord::test::unique_prefix() + "db";
  conn.command({"SET", key, "five"});
  auto tcp = server.connect();
  CHECK(rcoord::reply_is_nil(tcp.command({"GET", key}).get()));
  tcp.command({"SELECT", "5"});
  CHECK(rcoord::reply_string(tcp.command({"GET", key}).get()) == "five");
}

TEST_CASE("a server that restarts mid-session is reconnected to") {
  rcoord::test::RedisServer server;
  auto conn = server.connect(Millis(500));
  CHECK(rcoord::reply_string(conn.command({"PING"}).get()) == "PONG");
  server.kill_hard();
  CHECK_THROWS_AS(conn.command({"PING"}), rcoord::Error);
  CHECK_FALSE(conn.connected());
}
