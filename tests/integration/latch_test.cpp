// Count-down latches through their C++ API, against a real redis-server.

#include "latch.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "errors.hpp"
#include "redis_server.hpp"
#include "timing.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;
namespace latch = rcoord::latch;

namespace {

struct LatchFixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};
};

}  // namespace

TEST_CASE_FIXTURE(LatchFixture,
                  "init, down and status: never below zero, and init keeps what exists") {
  CHECK_FALSE(latch::status(conn, keys, "l").found);
  CHECK_FALSE(latch::down(conn, keys, "l", 1).found);
  CHECK_FALSE(latch::status(conn, keys, "l").found);  // down created nothing

  auto in = latch::init(conn, keys, "l", 3, std::nullopt);
  CHECK(in.created);
  CHECK(in.count == 3);
  auto again = latch::init(conn, keys, "l", 10, std::nullopt);
  CHECK_FALSE(again.created);
  CHECK(again.count == 3);

  CHECK(latch::down(conn, keys, "l", 1).count == 2);
  CHECK(latch::status(conn, keys, "l").count == 2);
  CHECK(latch::down(conn, keys, "l", 5).count == 0);
  CHECK(latch::down(conn, keys, "l", 1).count == 0);
  CHECK(latch::status(conn, keys, "l").found);
}

TEST_CASE_FIXTURE(LatchFixture, "--ttl makes the latch expire") {
  REQUIRE(latch::init(conn, keys, "ttl", 2, Millis(200)).created);
  CHECK(latch::status(conn, keys, "ttl").found);
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(latch::status(conn, keys, "ttl").found);
}

TEST_CASE_FIXTURE(LatchFixture, "a waiter returns when the count reaches 0, not before") {
  REQUIRE(latch::init(conn, keys, "w", 2, std::nullopt).created);
  latch::Waited waited;
  std::chrono::steady_clock::time_point returned;
  auto waiter = std::thread([&] {
    auto own = rcoord::test::shared_server().connect();
    waited = latch::wait(own, keys, "w", Millis(10'000));
    returned = std::chrono::steady_clock::now();
  });
  // once the waiter listens (it began to wait before this moment)
  CHECK(rcoord::test::wait_until(
      [&] { return rcoord::test::subscribers(conn, keys.object("latch", "w")) == 1; }));
  auto listening = std::chrono::steady_clock::now();
  latch::down(conn, keys, "w", 1);
  std::this_thread::sleep_for(200ms);  // a waiter that took 1 for 0 would be back by now
  auto last = std::chrono::steady_clock::now();
  latch::down(conn, keys, "w", 1);
  waiter.join();
  CHECK(waited.open);
  CHECK(returned >= last);
  // woken by the last count-down, not by the 30 s recheck: generous for a loaded machine
  CHECK(returned - last < rcoord::test::scaled(1000ms));
  CHECK(waited.waited_ms >= std::chrono::duration_cast<Millis>(last - listening).count());

  // Open already: at once.
  auto start = std::chrono::steady_clock::now();
  CHECK(latch::wait(conn, keys, "w", Millis(5000)).open);
  CHECK(std::chrono::steady_clock::now() - start < rcoord::test::scaled(1000ms));
}

TEST_CASE_FIXTURE(LatchFixture, "a latch that does not exist yet is waited for, and timeouts") {
  auto r = latch::wait(conn, keys, "none", Millis(200));
  CHECK_FALSE(r.open);
  CHECK_FALSE(r.count.has_value());

  REQUIRE(latch::init(conn, keys, "busy", 1, std::nullopt).created);
  auto busy = latch::wait(conn, keys, "busy", Millis(200));
  CHECK_FALSE(busy.open);
  CHECK(busy.count == 1);
  CHECK(busy.waited_ms >= 200);

  latch::Waited waited;
  auto waiter = std::thread([&] {
    auto own = rcoord::test::shared_server().connect();
    waited = latch::wait(own, keys, "later", Millis(10'000));
  });
  CHECK(rcoord::test::wait_until(
      [&] { return rcoord::test::subscribers(conn, keys.object("latch", "later")) == 1; }));
  latch::init(conn, keys, "later", 1, std::nullopt);
  latch::down(conn, keys, "later", 1);
  waiter.join();
  CHECK(waited.open);
}

TEST_CASE_FIXTURE(LatchFixture, "a latch of count 0 is open from the start") {
  REQUIRE(latch::init(conn, keys, "zero", 0, std::nullopt).created);
  CHECK(latch::wait(conn, keys, "zero", Millis(1000)).open);
}

TEST_CASE_FIXTURE(LatchFixture, "wrong types are server errors, bad counts usage errors") {
  conn.command({"SET", keys.object("latch", "str"), "precious"});
  CHECK_THROWS_AS(latch::init(conn, keys, "str", 1, std::nullopt), rcoord::Error);
  CHECK_THROWS_AS(latch::down(conn, keys, "str", 1), rcoord::Error);
  CHECK_THROWS_AS(latch::status(conn, keys, "str"), rcoord::Error);
  CHECK_THROWS_AS(latch::wait(conn, keys, "str", Millis(100)), rcoord::Error);
  CHECK(rcoord::reply_string(conn.command({"GET", keys.object("latch", "str")}).get()) ==
        "precious");
  try {
    latch::down(conn, keys, "x", 0);
    FAIL("accepted");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kUsage);
  }
  CHECK_THROWS_AS(latch::init(conn, keys, "x", -1, std::nullopt), rcoord::Error);
}
