// The lock module through its C++ API, against a real redis-server.

#include "lock.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "errors.hpp"
#include "redis_server.hpp"
#include "timing.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;
namespace lock = rcoord::lock;

namespace {

struct LockFixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};
};

}  // namespace

TEST_CASE_FIXTURE(LockFixture, "a lock is busy until released") {
  auto first = lock::acquire(conn, keys, "job", {});
  REQUIRE(first.acquired);
  CHECK(first.token.size() == 32);
  CHECK(first.ttl_ms == 30'000);

  auto second = lock::acquire(conn, keys, "job", {});
  CHECK_FALSE(second.acquired);
  CHECK(second.token.empty());
  CHECK(second.ttl_ms > 29'000);  // the holder's remaining TTL

  CHECK_FALSE(lock::release(conn, keys, "job", "not-the-token"));
  CHECK(lock::release(conn, keys, "job", first.token));
  CHECK_FALSE(lock::release(conn, keys, "job", first.token));  // already free
  CHECK(lock::acquire(conn, keys, "job", {}).acquired);
}

TEST_CASE_FIXTURE(LockFixture, "re-acquiring with the holder's token refreshes the TTL") {
  auto first = lock::acquire(conn, keys, "job", {Millis(1000), std::nullopt, "mine"});
  REQUIRE(first.acquired);
  auto again = lock::acquire(conn, keys, "job", {Millis(60'000), std::nullopt, "mine"});
  CHECK(again.acquired);
  CHECK(again.fence == first.fence);  // same holder, same fence
  CHECK(lock::status(conn, keys, "job").ttl_ms > 59'000);
  CHECK_FALSE(lock::acquire(conn, keys, "job", {Millis(1000), std::nullopt, "other"}).acquired);
}

TEST_CASE_FIXTURE(LockFixture, "fences strictly increase, across release and break") {
  std::int64_t last = 0;
  for (int i = 0; i < 5; ++i) {
    auto r = lock::acquire(conn, keys, "f", {});
    REQUIRE(r.acquired);
    CHECK(r.fence > last);
    last = r.fence;
    if (i % 2 == 0) {
      CHECK(lock::release(conn, keys, "f", r.token));
    } else {
      CHECK(lock::break_lock(conn, keys, "f").broken);
    }
  }
  CHECK(lock::status(conn, keys, "f").fence == last);  // free: the last fence handed out
}

namespace {

// The server's clock in µs (TIME).
std::int64_t server_us(rcoord::Connection& conn) {
  rcoord::Reply t = conn.command({"TIME"});
  return std::stoll(rcoord::reply_string(t->element[0])) * 1'000'000 +
         std::stoll(rcoord::reply_string(t->element[1]));
}

}  // namespace

TEST_CASE_FIXTURE(LockFixture, "a fence is at least the server's clock in µs, exact, and kept") {
  std::int64_t before = server_us(conn);
  auto r = lock::acquire(conn, keys, "clock", {});
  REQUIRE(r.acquired);
  CHECK(r.fence >= before);
  CHECK(r.fence <= server_us(conn));
  CHECK(r.fence < (std::int64_t{1} << 53));  // exact as a Lua number and a JSON number
  // The counter holds exactly the fence handed out (no exponent, no rounding).
  CHECK(rcoord::reply_string(conn.command({"GET", keys.aux("lock", "clock", "fence")}).get()) ==
        std::to_string(r.fence));
  // A reader's fence too, above the writer's.
  CHECK(lock::release(conn, keys, "clock", r.token));
  lock::AcquireOptions as_reader;
  as_reader.shared = true;
  auto reader = lock::acquire(conn, keys, "clock", as_reader);
  REQUIRE(reader.acquired);
  CHECK(reader.fence > r.fence);
}

TEST_CASE_FIXTURE(LockFixture, "extend keeps a held lock and refuses other tokens") {
  auto r = lock::acquire(conn, keys, "e", {Millis(500), std::nullopt, ""});
  REQUIRE(r.acquired);
  auto e = lock::extend(conn, keys, "e", r.token, Millis(5000));
  CHECK(e.extended);
  CHECK(e.fence == r.fence);
  CHECK_FALSE(lock::extend(conn, keys, "e", "other", Millis(5000)).extended);
  std::this_thread::sleep_for(700ms);  // past the first TTL
  CHECK(lock::status(conn, keys, "e").held);
  CHECK_FALSE(lock::extend(conn, keys, "gone", r.token, Millis(5000)).extended);
}

TEST_CASE_FIXTURE(LockFixture, "status reports the holder, its TTL and fence") {
  auto free = lock::status(conn, keys, "s");
  CHECK_FALSE(free.held);
  CHECK(free.token.empty());
  CHECK(free.ttl_ms == 0);
  auto r = lock::acquire(conn, keys, "s", {Millis(10'000), std::nullopt, ""});
  auto held = lock::status(conn, keys, "s");
  CHECK(held.held);
  CHECK(held.token == r.token);
  CHECK(held.fence == r.fence);
  CHECK(held.ttl_ms > 9'000);
  CHECK(held.ttl_ms <= 10'000);
}

TEST_CASE_FIXTURE(LockFixture, "a lock expires by its TTL when the holder vanishes") {
  REQUIRE(lock::acquire(conn, keys, "ttl", {Millis(200), std::nullopt, ""}).acquired);
  CHECK_FALSE(lock::acquire(conn, keys, "ttl", {}).acquired);
  std::this_thread::sleep_for(300ms);
  CHECK(lock::acquire(conn, keys, "ttl", {}).acquired);
}

TEST_CASE_FIXTURE(LockFixture, "a waiter is woken by the release, not by polling") {
  auto holder = lock::acquire(conn, keys, "w", {Millis(30'000), std::nullopt, ""});
  REQUIRE(holder.acquired);
  lock::Acquired waiter;
  std::chrono::steady_clock::time_point woken;
  auto waiting = std::thread([&] {
    auto own = rcoord::test::shared_server().connect();
    waiter = lock::acquire(own, keys, "w", {Millis(30'000), Millis(10'000), ""});
    woken = std::chrono::steady_clock::now();
  });
  // Released as soon as the waiter is seen blocked: its fallback retry would come 500 ms
  // after it began to wait at the earliest, so a wake-up well within that is the release's.
  CHECK(rcoord::test::wait_blocked(conn, 1));  // (CHECK: a thread is running)
  auto released = std::chrono::steady_clock::now();
  CHECK(lock::release(conn, keys, "w", holder.token));
  waiting.join();
  CHECK(waiter.acquired);
  CHECK(woken - released < rcoord::test::scaled(400ms));
  CHECK(waiter.fence > holder.fence);
}

TEST_CASE_FIXTURE(LockFixture, "a give-back says whether it woke a waiting writer") {
  auto first = lock::acquire(conn, keys, "tell", {});
  REQUIRE(first.acquired);
  auto alone = lock::release_waking(conn, keys, "tell", first.token);
  CHECK(alone.released);
  CHECK_FALSE(alone.woke);  // nobody waits

  auto second = lock::acquire(conn, keys, "tell", {});
  REQUIRE(second.acquired);
  lock::AcquireOptions enlisted;  // busy, and entered among the waiting writers
  enlisted.enlist = true;
  auto waiter = lock::acquire(conn, keys, "tell", enlisted);
  REQUIRE_FALSE(waiter.acquired);
  CHECK_FALSE(lock::release_waking(conn, keys, "tell", "not-the-token").woke);
  auto handed = lock::release_waking(conn, keys, "tell", second.token);
  CHECK(handed.released);
  CHECK(handed.woke);
  CHECK(lock::release(conn, keys, "tell", second.token) == false);  // once only
}

TEST_CASE_FIXTURE(LockFixture, "a waiter gives up after --wait and reports the holder") {
  REQUIRE(lock::acquire(conn, keys, "busy", {Millis(600'000), std::nullopt, ""}).acquired);
  auto start = std::chrono::steady_clock::now();
  auto r = lock::acquire(conn, keys, "busy", {Millis(30'000), Millis(300), ""});
  auto waited = std::chrono::steady_clock::now() - start;
  CHECK_FALSE(r.acquired);
  CHECK(waited >= 300ms);
  CHECK(waited < rcoord::test::scaled(1500ms));
  CHECK(r.ttl_ms > 500'000);
}

TEST_CASE_FIXTURE(LockFixture, "a waiter takes an expired lock without any release") {
  auto start = std::chrono::steady_clock::now();  // before the lease began
  REQUIRE(lock::acquire(conn, keys, "crash", {Millis(300), std::nullopt, ""}).acquired);
  auto r = lock::acquire(conn, keys, "crash", {Millis(1000), Millis(3000), ""});
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.acquired);
  CHECK(took >= 300ms);
  CHECK(r.waited_ms < rcoord::test::scaled(1500ms).count());
}

TEST_CASE_FIXTURE(LockFixture, "a key of another type is a server error and is left alone") {
  conn.command({"SET", keys.object("lock", "str"), "precious"});
  conn.command({"RPUSH", keys.object("lock", "list"), "a"});
  conn.command({"HSET", keys.object("lock", "hash"), "field", "v"});
  for (const char* name : {"str", "list", "hash"}) {
    CAPTURE(name);
    try {
      lock::acquire(conn, keys, name, {});
      FAIL("no error");
    } catch (const rcoord::Error& e) {
      CHECK(e.code() == rcoord::kServer);
      CHECK(std::string(e.what()).find(keys.object("lock", name)) != std::string::npos);
    }
    CHECK_THROWS_AS(lock::release(conn, keys, name, "t"), rcoord::Error);
    CHECK_THROWS_AS(lock::status(conn, keys, name), rcoord::Error);
    CHECK_THROWS_AS(lock::break_lock(conn, keys, name), rcoord::Error);
    CHECK_THROWS_AS(lock::extend(conn, keys, name, "t", Millis(100)), rcoord::Error);
  }
  CHECK(rcoord::reply_string(conn.command({"GET", keys.object("lock", "str")}).get()) ==
        "precious");
}

// A TTL of zero is refused where argv is parsed (tests/unit/options_test.cpp, cli_test.sh).
TEST_CASE_FIXTURE(LockFixture, "empty names are usage errors") {
  try {
    lock::acquire(conn, keys, "", {});
    FAIL("accepted");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kUsage);
  }
}

TEST_CASE_FIXTURE(LockFixture, "binary names work") {
  std::string name("a\0b\nc d", 7);
  auto r = lock::acquire(conn, keys, name, {});
  CHECK(r.acquired);
  CHECK(lock::status(conn, keys, name).token == r.token);
  CHECK(lock::release(conn, keys, name, r.token));
}
