// Leader election through its C++ API, against a real redis-server.

#include "elect.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "errors.hpp"
#include "redis_server.hpp"
#include "timing.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;
namespace elect = rcoord::elect;

namespace {

struct ElectFixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};
};

elect::CampaignOptions as(std::string id, Millis ttl = Millis(10'000)) {
  return {std::move(id), ttl, std::nullopt, false, ""};
}

}  // namespace

TEST_CASE_FIXTURE(ElectFixture,
                  "one leader that others see, and a term that moves only with the leader") {
  auto a = elect::campaign(conn, keys, "svc", as("a"));
  REQUIRE(a.leader);
  CHECK(a.term > 0);
  CHECK(a.ttl_ms == 10'000);
  CHECK(a.leader_id == "a");

  auto b = elect::campaign(conn, keys, "svc", as("b"));
  CHECK_FALSE(b.leader);
  CHECK(b.leader_id == "a");
  CHECK(b.term == a.term);
  CHECK(b.ttl_ms > 9'000);

  // The leader campaigning again renews and keeps its term.
  auto again = elect::campaign(conn, keys, "svc", as("a", Millis(60'000)));
  CHECK(again.leader);
  CHECK(again.term == a.term);
  CHECK(elect::status(conn, keys, "svc").ttl_ms > 59'000);

  CHECK_FALSE(elect::resign(conn, keys, "svc", {"b", std::nullopt, ""}).resigned);
  auto gone = elect::resign(conn, keys, "svc", {"a", std::nullopt, ""});
  CHECK(gone.resigned);
  CHECK(gone.term == a.term);
  auto none = elect::status(conn, keys, "svc");
  CHECK_FALSE(none.leader);
  CHECK(none.id.empty());
  CHECK(none.term == a.term);  // the last term handed out

  auto next = elect::campaign(conn, keys, "svc", as("b"));
  CHECK(next.leader);
  CHECK(next.term > a.term);
}

TEST_CASE_FIXTURE(ElectFixture, "an expired lease gives a new term, even to the same id") {
  auto first = elect::campaign(conn, keys, "e", as("a", Millis(200)));
  REQUIRE(first.leader);
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(elect::status(conn, keys, "e").leader);
  auto back = elect::campaign(conn, keys, "e", as("a"));
  CHECK(back.leader);
  CHECK(back.term > first.term);
}

TEST_CASE_FIXTURE(ElectFixture, "an incumbent that keeps renewing is never displaced") {
  // A lease of 600 ms renewed every 100 ms, for 1.5 s: well past the lease, and a renewal can
  // come 500 ms late (a busy machine) before the lease is in danger.
  auto a = elect::campaign(conn, keys, "r", as("a", Millis(600)));
  REQUIRE(a.leader);
  auto other = rcoord::test::shared_server().connect();
  for (int i = 0; i < 15; ++i) {
    std::this_thread::sleep_for(100ms);
    CHECK(elect::renew(conn, keys, "r", "a", a.term, Millis(600)));
    auto b = elect::campaign(other, keys, "r", as("b", Millis(600)));
    CHECK_FALSE(b.leader);
  }
  CHECK(elect::status(conn, keys, "r").term == a.term);
}

TEST_CASE_FIXTURE(ElectFixture, "renew and resign are bound to the term and the token") {
  auto a = elect::campaign(conn, keys, "t", {"a", Millis(10'000), std::nullopt, false, "tok-a"});
  REQUIRE(a.leader);
  CHECK_FALSE(elect::renew(conn, keys, "t", "a", a.term + 1, Millis(1000)));
  CHECK_FALSE(elect::renew(conn, keys, "t", "b", a.term, Millis(1000)));
  CHECK(elect::renew(conn, keys, "t", "a", a.term, Millis(1000)));
  CHECK_FALSE(elect::resign(conn, keys, "t", {"a", a.term + 1, ""}).resigned);
  CHECK_FALSE(elect::resign(conn, keys, "t", {"a", std::nullopt, "tok-other"}).resigned);
  CHECK(elect::resign(conn, keys, "t", {"a", a.term, "tok-a"}).resigned);
  // Gone: renewing never takes leadership back.
  CHECK_FALSE(elect::renew(conn, keys, "t", "a", a.term, Millis(1000)));
  CHECK_FALSE(elect::status(conn, keys, "t").leader);
}

TEST_CASE_FIXTURE(ElectFixture, "exclusive campaigns refuse a live lease of the same id") {
  auto start = std::chrono::steady_clock::now();  // before the lease began
  auto first = elect::campaign(conn, keys, "x", as("a", Millis(300)));
  REQUIRE(first.leader);
  auto dup = elect::campaign(conn, keys, "x", {"a", Millis(300), std::nullopt, true, ""});
  CHECK_FALSE(dup.leader);
  CHECK(dup.leader_id == "a");
  // It waits for the lease to run out instead, and then gets a term of its own.
  auto later = elect::campaign(conn, keys, "x", {"a", Millis(300), Millis(3000), true, ""});
  CHECK(later.leader);
  CHECK(later.term > first.term);
  CHECK(std::chrono::steady_clock::now() - start >= 300ms);  // not before the lease ended
}

TEST_CASE_FIXTURE(ElectFixture, "a waiting candidate is woken by the resignation") {
  auto a = elect::campaign(conn, keys, "w", as("a", Millis(30'000)));
  REQUIRE(a.leader);
  elect::Campaign b;
  std::chrono::steady_clock::time_point woken;
  auto candidate = std::thread([&] {
    auto own = rcoord::test::shared_server().connect();
    b = elect::campaign(own, keys, "w", {"b", Millis(10'000), Millis(10'000), false, ""});
    woken = std::chrono::steady_clock::now();
  });
  // Resigned as soon as b is seen waiting: the fallback would come 500 ms after b began to
  // wait at the earliest, so a wake-up well within that is the resignation's.
  CHECK(rcoord::test::wait_blocked(conn, 1));  // (CHECK: a thread is running)
  auto resigned = std::chrono::steady_clock::now();
  CHECK(elect::resign(conn, keys, "w", {"a", std::nullopt, ""}).resigned);
  candidate.join();
  CHECK(b.leader);
  CHECK(b.term > a.term);
  CHECK(woken - resigned < rcoord::test::scaled(400ms));
}

TEST_CASE_FIXTURE(ElectFixture, "a waiting candidate takes over when the leader's lease ends") {
  auto start = std::chrono::steady_clock::now();  // before the lease began
  REQUIRE(elect::campaign(conn, keys, "c", as("a", Millis(400))).leader);
  auto b = elect::campaign(conn, keys, "c", {"b", Millis(1000), Millis(3000), false, ""});
  CHECK(b.leader);
  CHECK(std::chrono::steady_clock::now() - start >= 400ms);
  CHECK(b.waited_ms < rcoord::test::scaled(1200ms).count());
}

TEST_CASE_FIXTURE(ElectFixture, "observe reports every change in order, expiry included") {
  std::mutex mu;
  std::vector<elect::Status> seen;
  auto observer = std::thread([&] {
    auto own = rcoord::test::shared_server().connect();
    // The observation ends at its timeout, which must outlast every step below, the 500 ms
    // lease running out included, on a loaded machine too (CI ran past 2.5 s): generous,
    // since the test always lasts that long.
    elect::observe(own, keys, "o", rcoord::test::scaled(6000ms), [&](const elect::Status& s) {
      std::lock_guard<std::mutex> hold(mu);
      seen.push_back(s);
    });
  });
  auto seen_count = [&] {
    std::lock_guard<std::mutex> hold(mu);
    return seen.size();
  };
  // Changes start once the observer has shown the state it read after subscribing: a change
  // made before that read would be folded into the first state shown (a slow machine did so).
  auto changes = keys.aux("elect", "o", "changes");
  CHECK(rcoord::test::wait_until([&] { return rcoord::test::subscribers(conn, changes) == 1; }));
  CHECK(rcoord::test::wait_until([&] { return seen_count() == 1; }));
  auto a = elect::campaign(conn, keys, "o", as("a"));
  REQUIRE(a.leader);
  REQUIRE(elect::resign(conn, keys, "o", {"a", std::nullopt, ""}).resigned);  // vacancy
  auto b = elect::campaign(conn, keys, "o", as("b", Millis(500)));
  REQUIRE(b.leader);
  // b's lease runs out, announced by nobody: the observer sees it by itself; then c.
  CHECK(rcoord::test::wait_until([&] { return seen_count() == 5; }));
  auto c = elect::campaign(conn, keys, "o", as("c", Millis(600'000)));  // past the end
  REQUIRE(c.leader);
  observer.join();

  std::lock_guard<std::mutex> hold(mu);
  REQUIRE(seen.size() == 6);
  CHECK_FALSE(seen[0].leader);  // the state at the start: nobody, term 0
  CHECK(seen[0].term == 0);
  CHECK((seen[1].leader && seen[1].id == "a" && seen[1].term == a.term));
  CHECK((!seen[2].leader && seen[2].term == a.term));
  CHECK((seen[3].leader && seen[3].id == "b" && seen[3].term == b.term));
  CHECK((!seen[4].leader && seen[4].term == b.term));  // the expiry
  CHECK((seen[5].leader && seen[5].id == "c" && seen[5].term == c.term));
  CHECK((a.term < b.term && b.term < c.term));
}

TEST_CASE_FIXTURE(ElectFixture, "a key of another type is a server error and is left alone") {
  conn.command({"SET", keys.object("elect", "str"), "precious"});
  conn.command({"RPUSH", keys.aux("elect", "ctr", "term"), "x"});
  for (const char* name : {"str", "ctr"}) {
    CAPTURE(name);
    try {
      elect::campaign(conn, keys, name, as("a"));
      FAIL("no error");
    } catch (const rcoord::Error& e) {
      CHECK(e.code() == rcoord::kServer);
      CHECK(std::string(e.what()).find("election '" + std::string(name) + "': key '") !=
            std::string::npos);
    }
  }
  CHECK_THROWS_AS(elect::status(conn, keys, "str"), rcoord::Error);
  CHECK_THROWS_AS(elect::resign(conn, keys, "str", {"a", std::nullopt, ""}), rcoord::Error);
  CHECK_THROWS_AS(elect::renew(conn, keys, "str", "a", 1, Millis(100)), rcoord::Error);
  CHECK(rcoord::reply_string(conn.command({"GET", keys.object("elect", "str")}).get()) ==
        "precious");
}

// A TTL of zero is refused where argv is parsed (tests/unit/options_test.cpp, cli_test.sh).
TEST_CASE_FIXTURE(ElectFixture, "empty names and ids are usage errors") {
  for (auto call :
       {+[](rcoord::Connection&c, const rcoord::Keys&k) { elect::campaign(c, k, "", as("a")); },
        +[](rcoord::Connection&c, const rcoord::Keys&k) { elect::campaign(c, k, "n", as("")); }}) {
    try {
      call(conn, keys);
      FAIL("accepted");
    } catch (const rcoord::Error& e) {
      CHECK(e.code() == rcoord::kUsage);
    }
  }
}
