// Signals through their C++ API, against a real redis-server.

#include "signaling.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "errors.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;
namespace signaling = rcoord::signaling;

namespace {

struct SignalFixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};

  std::int64_t registered(const std::string& channel) {
    return rcoord::reply_integer(conn.command({"ZCARD", keys.object("signal", channel)}).get());
  }
  void wait_registered(const std::string& channel, std::int64_t n) {
    for (int i = 0; i < 200 && registered(channel) < n; ++i) std::this_thread::sleep_for(10ms);
    REQUIRE(registered(channel) == n);
  }
};

// A waiter on its own connection and thread.
struct Waiter {
  signaling::Waited result;
  std::thread thread;
  Waiter(const rcoord::Keys& keys, std::vector<std::string> channels, signaling::WaitOptions opts)
      : thread([this, &keys, channels, opts] {
          auto c = rcoord::test::shared_server().connect();
          result = signaling::wait(c, keys, channels, opts);
        }) {}
  void join() { thread.join(); }
};

}  // namespace

TEST_CASE_FIXTURE(SignalFixture, "nobody waiting: zero receivers") {
  CHECK(signaling::send(conn, keys, "none", "x", false).receivers == 0);
  CHECK(signaling::send(conn, keys, "none", "x", true).receivers == 0);
}

TEST_CASE_FIXTURE(SignalFixture, "a broadcast reaches every waiter, --one exactly one") {
  std::vector<std::unique_ptr<Waiter>> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(std::make_unique<Waiter>(keys, std::vector<std::string>{"b"},
                                               signaling::WaitOptions{Millis(5000), false}));
  }
  wait_registered("b", 3);
  CHECK(signaling::send(conn, keys, "b", "all of you", false).receivers == 3);
  for (auto& w : waiters) {
    w->join();
    REQUIRE(w->result.complete);
    REQUIRE(w->result.messages.size() == 1);
    CHECK(w->result.messages[0].data == "all of you");
    CHECK(w->result.messages[0].channel == "b");
  }
  CHECK(registered("b") == 0);  // every waiter left the registry

  waiters.clear();
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(std::make_unique<Waiter>(keys, std::vector<std::string>{"o"},
                                               signaling::WaitOptions{Millis(5000), false}));
  }
  wait_registered("o", 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(signaling::send(conn, keys, "o", "msg" + std::to_string(i), true).receivers == 1);
  }
  CHECK(signaling::send(conn, keys, "o", "extra", true).receivers == 0);
  std::vector<std::string> got;
  for (auto& w : waiters) {
    w->join();
    REQUIRE(w->result.complete);
    got.push_back(w->result.messages.at(0).data);
  }
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::string>{"msg0", "msg1", "msg2"});
}

TEST_CASE_FIXTURE(SignalFixture, "a send counts the waiters that take it, each once") {
  std::vector<std::unique_ptr<Waiter>> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(std::make_unique<Waiter>(keys, std::vector<std::string>{"n"},
                                               signaling::WaitOptions{Millis(5000), false}));
  }
  wait_registered("n", 3);
  CHECK(signaling::send(conn, keys, "n", "one", true).receivers == 1);
  CHECK(signaling::send(conn, keys, "n", "rest", false).receivers == 2);
  CHECK(signaling::send(conn, keys, "n", "late", false).receivers == 0);
  for (auto& w : waiters) w->join();
}

TEST_CASE_FIXTURE(SignalFixture, "a timeout ends the wait with nothing, and binary data passes") {
  auto start = std::chrono::steady_clock::now();
  auto r = signaling::wait(conn, keys, {"t"}, {Millis(300), false});
  CHECK_FALSE(r.complete);
  CHECK(std::chrono::steady_clock::now() - start >= 300ms);
  REQUIRE(r.messages.size() == 1);
  CHECK_FALSE(r.messages[0].received);
  CHECK(registered("t") == 0);

  std::string binary("a\0b\n\xff", 5);
  Waiter w(keys, {"bin"}, {Millis(5000), false});
  wait_registered("bin", 1);
  CHECK(signaling::send(conn, keys, "bin", binary, true).receivers == 1);
  w.join();
  CHECK(w.result.messages.at(0).data == binary);
}

TEST_CASE_FIXTURE(SignalFixture, "--all waits for one message on every channel") {
  Waiter w(keys, {"x", "y", "x"}, {Millis(5000), true});
  wait_registered("y", 1);
  signaling::send(conn, keys, "y", "Y", false);
  std::this_thread::sleep_for(100ms);
  signaling::send(conn, keys, "y", "Y2", false);  // a second one on y is not taken
  signaling::send(conn, keys, "x", "X", true);
  w.join();
  REQUIRE(w.result.complete);
  REQUIRE(w.result.messages.size() == 2);  // the duplicate channel counts once
  CHECK(w.result.messages[0].channel == "x");
  CHECK(w.result.messages[0].data == "X");
  CHECK(w.result.messages[1].channel == "y");
  CHECK(w.result.messages[1].data == "Y");
}

TEST_CASE_FIXTURE(SignalFixture, "a --one message the waiter does not use goes to another") {
  // w1 waits on a or b and takes the first; w2 waits on b. Whichever of them --one picks
  // for b, b's message must end with w2: directly, or handed on by w1.
  for (int round = 0; round < 8; ++round) {
    CAPTURE(round);
    Waiter w1(keys, {"a", "b"}, {Millis(5000), false});
    wait_registered("b", 1);
    Waiter w2(keys, {"b"}, {Millis(5000), false});
    wait_registered("b", 2);
    CHECK(signaling::send(conn, keys, "a", "A", true).receivers == 1);
    CHECK(signaling::send(conn, keys, "b", "B", true).receivers == 1);
    w1.join();
    w2.join();
    REQUIRE(w1.result.complete);
    CHECK(w1.result.messages.at(0).data == "A");
    CHECK(w1.result.dropped.empty());
    REQUIRE(w2.result.complete);
    CHECK(w2.result.messages.at(0).data == "B");
  }
}

TEST_CASE_FIXTURE(SignalFixture, "a waiter whose connection is gone does not swallow --one") {
  // Registered ids with nobody subscribed behind them: waiters that died. --one picks at
  // random, so it mostly tries dead ones first; the live waiter must get the message anyway.
  for (int round = 0; round < 5; ++round) {
    CAPTURE(round);
    for (int i = 0; i < 5; ++i) {
      conn.command({"ZADD", keys.object("signal", "d"), "+inf", "dead-" + std::to_string(i)});
    }
    Waiter live(keys, {"d"}, {Millis(5000), false});
    wait_registered("d", 6);
    CHECK(signaling::send(conn, keys, "d", "for the living", true).receivers == 1);
    live.join();
    REQUIRE(live.result.complete);
    CHECK(live.result.messages.at(0).data == "for the living");
    // The dead ones tried on the way were dropped; the rest are dropped by the next send.
    CHECK(signaling::send(conn, keys, "d", "nobody", true).receivers == 0);
    CHECK(registered("d") == 0);
  }
}

TEST_CASE_FIXTURE(SignalFixture, "a key of another type is a server error") {
  conn.command({"SET", keys.object("signal", "str"), "precious"});
  CHECK_THROWS_AS(signaling::send(conn, keys, "str", "x", true), rcoord::Error);
  try {
    signaling::wait(conn, keys, {"str"}, {Millis(100), false});
    FAIL("no error");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kServer);
  }
  CHECK(rcoord::reply_string(conn.command({"GET", keys.object("signal", "str")}).get()) ==
        "precious");
}
