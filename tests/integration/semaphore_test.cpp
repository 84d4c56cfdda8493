// The semaphore module through its C++ API, against a real redis-server.

#include "semaphore.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "redis_server.hpp"
#include "timing.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;
namespace sem = rcoord::semaphore;

namespace {

struct SemFixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};
  sem::TakeOptions limit(std::int64_t n, std::int64_t k = 1) {
    sem::TakeOptions o;
    o.limit = n;
    o.permits = k;
    return o;
  }
};

}  // namespace

TEST_CASE_FIXTURE(SemFixture, "never more than limit holders") {
  auto a = sem::take(conn, keys, "s", limit(2));
  auto b = sem::take(conn, keys, "s", limit(2));
  REQUIRE(a.acquired);
  REQUIRE(b.acquired);
  CHECK(b.holders == 2);
  CHECK(b.in_use == 2);
  auto c = sem::take(conn, keys, "s", limit(2));
  CHECK_FALSE(c.acquired);
  CHECK(c.in_use == 2);
  CHECK(sem::release(conn, keys, "s", a.token));
  CHECK(sem::take(conn, keys, "s", limit(2)).acquired);
}

TEST_CASE_FIXTURE(SemFixture, "a holder taking again refreshes instead of taking more") {
  auto o = limit(1);
  o.token = "mine";
  o.ttl = Millis(500);
  REQUIRE(sem::take(conn, keys, "r", o).acquired);
  o.ttl = Millis(60'000);
  auto again = sem::take(conn, keys, "r", o);
  CHECK(again.acquired);
  CHECK(again.in_use == 1);
  std::this_thread::sleep_for(700ms);
  CHECK(sem::status(conn, keys, "r").holders.size() == 1);
}

TEST_CASE_FIXTURE(SemFixture, "expired holders are reclaimed atomically") {
  auto o = limit(1);
  o.ttl = Millis(200);
  auto a = sem::take(conn, keys, "x", o);
  REQUIRE(a.acquired);
  CHECK_FALSE(sem::take(conn, keys, "x", limit(1)).acquired);
  std::this_thread::sleep_for(300ms);
  CHECK(sem::status(conn, keys, "x").holders.empty());
  CHECK(sem::take(conn, keys, "x", limit(1)).acquired);
  CHECK_FALSE(sem::refresh(conn, keys, "x", a.token, Millis(1000)));  // expired: not ours
  CHECK_FALSE(sem::release(conn, keys, "x", a.token));
}

TEST_CASE_FIXTURE(SemFixture, "refresh extends only live holders") {
  auto o = limit(1);
  o.ttl = Millis(400);
  auto a = sem::take(conn, keys, "f", o);
  CHECK(sem::refresh(conn, keys, "f", a.token, Millis(5000)));
  std::this_thread::sleep_for(500ms);
  auto s = sem::status(conn, keys, "f");
  REQUIRE(s.holders.size() == 1);
  CHECK(s.holders[0].ttl_ms > 4000);
  CHECK_FALSE(sem::refresh(conn, keys, "f", "other", Millis(5000)));
}

TEST_CASE_FIXTURE(SemFixture, "permits are taken all or none") {
  auto a = sem::take(conn, keys, "p", limit(5, 3));
  REQUIRE(a.acquired);
  CHECK(a.in_use == 3);
  CHECK_FALSE(sem::take(conn, keys, "p", limit(5, 3)).acquired);
  auto b = sem::take(conn, keys, "p", limit(5, 2));
  CHECK(b.acquired);
  CHECK(b.in_use == 5);
  auto s = sem::status(conn, keys, "p");
  CHECK(s.limit == 5);
  CHECK(s.in_use == 5);
  CHECK(s.holders.size() == 2);
}

TEST_CASE_FIXTURE(SemFixture, "a waiter is woken by the release and then leaves no ticket") {
  auto holder = sem::take(conn, keys, "w", limit(1));
  REQUIRE(holder.acquired);
  // Released as soon as the waiter is seen blocked: a heartbeat retry would come 1 s after it
  // began to wait, so a wake-up well within that is the release's.
  std::chrono::steady_clock::time_point released;
  rcoord::GivenBack given;
  std::thread releaser([&] {
    auto other = rcoord::test::shared_server().connect();
    CHECK(rcoord::test::wait_blocked(other, 1));
    released = std::chrono::steady_clock::now();
    given = sem::release_waking(other, keys, "w", holder.token);
  });
  auto o = limit(1);
  o.wait = Millis(10'000);
  auto r = sem::take(conn, keys, "w", o);
  auto woken = std::chrono::steady_clock::now();
  releaser.join();
  CHECK(given.released);
  CHECK(given.woke);  // the release says it woke the waiter
  CHECK(r.acquired);
  CHECK(woken - released < rcoord::test::scaled(800ms));
  auto alone = sem::release_waking(conn, keys, "w", r.token);
  CHECK(alone.released);
  CHECK_FALSE(alone.woke);  // nobody waits now
  CHECK(sem::status(conn, keys, "w").waiting == 0);
}

TEST_CASE_FIXTURE(SemFixture, "a waiter that gives up leaves the queue") {
  REQUIRE(sem::take(conn, keys, "g", limit(1)).acquired);
  auto o = limit(1);
  o.wait = Millis(300);
  CHECK_FALSE(sem::take(conn, keys, "g", o).acquired);
  CHECK(sem::status(conn, keys, "g").waiting == 0);
  auto queued = conn.command({"ZCARD", keys.aux("sem", "g", "queue")});
  CHECK(rcoord::reply_integer(queued.get()) == 0);
}

TEST_CASE_FIXTURE(SemFixture, "bad options are usage errors; wrong types are server errors") {
  for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{0, 1}, {2, 3}, {2, 0}}) {
    try {
      sem::take(conn, keys, "u", limit(n, k));
      FAIL("accepted");
    } catch (const rcoord::Error& e) {
      CHECK(e.code() == rcoord::kUsage);
    }
  }
  conn.command({"SET", keys.object("sem", "str"), "x"});
  CHECK_THROWS_AS(sem::take(conn, keys, "str", limit(1)), rcoord::Error);
  CHECK(rcoord::reply_string(conn.command({"GET", keys.object("sem", "str")}).get()) == "x");
}

TEST_CASE_FIXTURE(SemFixture, "idle semaphores expire by themselves") {
  auto o = limit(1);
  o.ttl = Millis(100);
  REQUIRE(sem::take(conn, keys, "idle", o).acquired);
  auto ttl = rcoord::reply_integer(conn.command({"PTTL", keys.object("sem", "idle")}).get());
  CHECK(ttl > 0);
  CHECK(ttl <= 60'100);
}
