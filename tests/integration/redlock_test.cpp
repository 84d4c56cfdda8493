// Redlock through its C++ API, against five real redis-servers started for the test.

#include "redlock.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "errors.hpp"
#include "pubsub.hpp"
#include "redis_server.hpp"
#include "timing.hpp"

using rcoord::Millis;
using namespace std::chrono_literals;
namespace lock = rcoord::lock;
namespace redlock = rcoord::redlock;

namespace {

struct Cluster {
  std::vector<std::unique_ptr<rcoord::test::RedisServer>> servers;
  rcoord::Keys keys{rcoord::test::unique_prefix()};

  explicit Cluster(int n) {
    for (int i = 0; i < n; ++i) servers.push_back(std::make_unique<rcoord::test::RedisServer>());
  }
  std::vector<rcoord::Endpoint> endpoints() const {
    std::vector<rcoord::Endpoint> eps;
    for (const auto& s : servers) eps.push_back(s->endpoint());
    return eps;
  }
  redlock::Redlock redlock() const { return redlock::Redlock(endpoints(), Millis(1000), keys); }
  // Whether every node has `n` subscribers on the channel a give-back of `name` is announced on.
  bool listened_to(const std::string& name, int n) {
    std::string channel = lock::released_channel(keys, name);
    for (const auto& s : servers) {
      if (!s) continue;
      auto conn = s->connect();
      if (rcoord::test::subscribers(conn, channel) != n) return false;
    }
    return true;
  }
  // Scripts node `i` has run so far (EVAL and EVALSHA): two per Redlock attempt that fails.
  std::int64_t scripts_run(int i) {
    auto conn = servers[static_cast<std::size_t>(i)]->connect();
    std::string stats = rcoord::reply_string(conn.command({"INFO", "commandstats"}).get());
    std::int64_t calls = 0;
    for (const char* cmd : {"cmdstat_eval:calls=", "cmdstat_evalsha:calls="}) {
      auto at = stats.find(cmd);
      if (at != std::string::npos) calls += std::stoll(stats.substr(at + std::strlen(cmd)));
    }
    return calls;
  }
  // A plain lock on one node, as a holder that only reached that node would leave it.
  lock::Acquired hold_on(int i, const std::string& name, const std::string& token) {
    auto conn = servers[static_cast<std::size_t>(i)]->connect();
    return lock::acquire(conn, keys, name, {Millis(20'000), std::nullopt, token, false});
  }
};

}  // namespace

TEST_CASE("a Redlock needs three nodes and a quorum of N/2+1") {
  Cluster c(5);
  auto rl = c.redlock();
  CHECK(rl.nodes() == 5);
  CHECK(rl.quorum() == 3);
  std::vector<rcoord::Endpoint> two = c.endpoints();
  two.resize(2);
  CHECK_THROWS_AS(redlock::Redlock(two, Millis(100), c.keys), rcoord::Error);
}

TEST_CASE("acquire, extend, status and release over all nodes") {
  Cluster c(5);
  auto rl = c.redlock();
  auto a = rl.acquire("job", {Millis(10'000), std::nullopt, "", false});
  REQUIRE(a.lock.acquired);
  CHECK(a.votes.acquired_on == 5);
  CHECK(a.votes.validity_ms > 5'000);
  CHECK(a.votes.validity_ms <= 10'000 - redlock::drift(Millis(10'000)).count());

  auto busy = rl.acquire("job", {Millis(10'000), std::nullopt, "", false});
  CHECK_FALSE(busy.lock.acquired);
  CHECK(busy.lock.ttl_ms > 5'000);

  auto e = rl.extend("job", a.lock.token, Millis(30'000));
  CHECK(e.lock.extended);
  CHECK(e.lock.fence == a.lock.fence);
  auto s = rl.status("job");
  CHECK(s.lock.held);
  CHECK(s.lock.token == a.lock.token);
  CHECK(s.lock.ttl_ms > 20'000);
  CHECK(s.votes.acquired_on == 5);

  CHECK_FALSE(rl.extend("job", "not-the-token", Millis(1000)).lock.extended);
  auto r = rl.release("job", a.lock.token);
  CHECK(r.released);
  CHECK(r.released_on == 5);
  CHECK_FALSE(rl.status("job").lock.held);
}

TEST_CASE("a minority holder does not block; a majority holder does, and nothing is left") {
  Cluster c(5);
  auto rl = c.redlock();
  REQUIRE(c.hold_on(0, "m", "other").acquired);
  REQUIRE(c.hold_on(1, "m", "other").acquired);
  auto a = rl.acquire("m", {Millis(10'000), std::nullopt, "mine", false});
  CHECK(a.lock.acquired);
  CHECK(a.votes.acquired_on == 3);
  CHECK(rl.release("m", "mine").released_on == 3);

  REQUIRE(c.hold_on(2, "m", "other").acquired);
  auto b = rl.acquire("m", {Millis(10'000), std::nullopt, "mine", false});
  CHECK_FALSE(b.lock.acquired);
  // the failed attempt gave back the two nodes it got
  auto node3 = c.servers[3]->connect();
  CHECK_FALSE(lock::status(node3, c.keys, "m").held);
}

TEST_CASE("the fence increases across different majorities") {
  Cluster c(3);
  auto rl = c.redlock();
  // node 0 runs far ahead on its own
  for (int i = 0; i < 5; ++i) {
    REQUIRE(c.hold_on(0, "f", "solo").acquired);
    auto conn = c.servers[0]->connect();
    lock::release(conn, c.keys, "f", "solo");
  }
  auto first = rl.acquire("f", {Millis(10'000), std::nullopt, "", false});  // nodes 0, 1, 2
  REQUIRE(first.lock.acquired);
  CHECK(first.lock.fence >= 6);
  rl.release("f", first.lock.token);
  REQUIRE(c.hold_on(0, "f", "blocker").acquired);  // next majority: nodes 1 and 2
  auto second = rl.acquire("f", {Millis(10'000), std::nullopt, "", false});
  REQUIRE(second.lock.acquired);
  CHECK(second.votes.acquired_on == 2);
  CHECK(second.lock.fence > first.lock.fence);
}

TEST_CASE("without a quorum of answering nodes, every verb is a connection error") {
  Cluster c(3);
  auto rl = c.redlock();
  c.servers[0]->kill_hard();
  auto a = rl.acquire("q", {Millis(10'000), std::nullopt, "", false});
  REQUIRE(a.lock.acquired);  // 2 of 3 is a quorum
  CHECK(a.votes.acquired_on == 2);
  c.servers[1]->kill_hard();
  try {
    rl.status("q");
    FAIL("status without a quorum did not throw");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kConnection);
    CHECK(std::string(e.what()) == "only 1 of 3 Redis nodes answered; Redlock needs 2");
  }
  CHECK_THROWS_AS(rl.acquire("q2", {Millis(10'000), std::nullopt, "", false}), rcoord::Error);
  CHECK_THROWS_AS(rl.release("q", a.lock.token), rcoord::Error);
}

TEST_CASE("a waiter listens for the give-back on every node instead of retrying") {
  Cluster c(3);
  auto rl = c.redlock();
  auto holder = rl.acquire("h", {Millis(30'000), std::nullopt, "", false});
  REQUIRE(holder.lock.acquired);
  redlock::Acquired waiter;
  std::chrono::steady_clock::time_point woken;
  auto waiting = std::thread([&] {
    auto own = c.redlock();
    waiter = own.acquire("h", {Millis(30'000), Millis(20'000), "", false});
    woken = std::chrono::steady_clock::now();
  });
  CHECK(rcoord::test::wait_until([&] { return c.listened_to("h", 1); }));
  // While the holder keeps it, the waiter only rechecks once a second: in 600 ms it may
  // have made the attempt it makes right after subscribing and one more, where jittered
  // retries (at most 100 ms apart) would have made five or more.
  std::int64_t before = c.scripts_run(0);
  std::this_thread::sleep_for(600ms);
  CHECK(c.scripts_run(0) - before <= 2 * 2);
  // The give-back wakes it well within that second.
  auto released = std::chrono::steady_clock::now();
  CHECK(rl.release("h", holder.lock.token).released_on == 3);
  waiting.join();
  CHECK(waiter.lock.acquired);
  CHECK(woken - released < rcoord::test::scaled(400ms));
  CHECK(waiter.lock.fence > holder.lock.fence);
  CHECK(rcoord::test::wait_until([&] { return c.listened_to("h", 0); }));  // none left
}

TEST_CASE("every node announces a holder's give-back, naming the waiter to go first") {
  Cluster c(3);
  auto rl = c.redlock();
  std::vector<rcoord::Subscriber> subs;
  for (const auto& s : c.servers) {
    subs.emplace_back(s->endpoint(), Millis(2000));
    subs.back().subscribe({lock::released_channel(c.keys, "a")});
  }
  auto held = rl.acquire("a", {Millis(30'000), std::nullopt, "", false});
  REQUIRE(held.lock.acquired);
  CHECK_FALSE(rl.release("a", "not-the-holder").released);
  for (auto& sub : subs) CHECK(sub.sync().empty());
  auto alone = rl.release("a", held.lock.token);
  CHECK(alone.released);
  CHECK_FALSE(alone.woke);
  for (auto& sub : subs) {
    auto m = sub.next(rcoord::test::scaled(2000ms));
    REQUIRE(m.has_value());
    CHECK(m->data == "released");  // nobody waits
  }
  // Two waiters, enlisted on every node as a Redlock waiter's busy answers enlist it: the
  // one whose heartbeat is oldest is named, on every node (on a tie in server milliseconds,
  // the smaller token: "first" again).
  held = rl.acquire("a", {Millis(30'000), std::nullopt, "", false});
  REQUIRE(held.lock.acquired);
  for (const char* waiter : {"first", "second"}) {
    for (const auto& s : c.servers) {
      auto conn = s->connect();
      lock::AcquireOptions busy{Millis(30'000), std::nullopt, waiter, false};
      busy.enlist = true;
      CHECK_FALSE(lock::acquire(conn, c.keys, "a", busy).acquired);
    }
  }
  auto handed = rl.release("a", held.lock.token);
  CHECK(handed.released);
  CHECK(handed.woke);  // a waiter was woken: `lock run` on a Redlock yields the CPU then
  for (auto& sub : subs) {
    auto m = sub.next(rcoord::test::scaled(2000ms));
    REQUIRE(m.has_value());
    CHECK(m->data == "released first");
  }
}

TEST_CASE("with a node down, the waiter listens to the others and still takes the lock") {
  Cluster c(3);
  auto rl = c.redlock();
  auto holder = rl.acquire("d", {Millis(30'000), std::nullopt, "", false});
  REQUIRE(holder.lock.acquired);
  c.servers[2]->kill_hard();
  redlock::Acquired waiter;
  auto waiting = std::thread([&] {
    auto own = c.redlock();
    waiter = own.acquire("d", {Millis(30'000), Millis(20'000), "", false});
  });
  CHECK(rcoord::test::wait_until([&] {
    auto conn = c.servers[0]->connect();
    return rcoord::test::subscribers(conn, lock::released_channel(c.keys, "d")) == 1;
  }));
  CHECK(rl.release("d", holder.lock.token).released_on == 2);
  waiting.join();
  CHECK(waiter.lock.acquired);
  CHECK(waiter.votes.acquired_on == 2);
}
