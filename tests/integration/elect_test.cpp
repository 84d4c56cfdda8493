// Leader election through its C++ API, against a real redis-server.

#include "elect.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "errors.hpp"
#include "redis_server.hpp"

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
  CHECK(a.term == 1);
  CHECK(a.ttl_ms == 10'000);
  CHECK(a.leader_id == "a");

  auto b = elect::campaign(conn, keys, "svc", as("b"));
  CHECK_FALSE(b.leader);
  CHECK(b.leader_id == "a");
  CHECK(b.term == 1);
  CHECK(b.ttl_ms > 9'000);

  // The leader campaigning again renews and keeps its term.
  auto again = elect::campaign(conn, keys, "svc", as("a", Millis(60'000)));
  CHECK(again.leader);
  CHECK(again.term == 1);
  CHECK(elect::status(conn, keys, "svc").ttl_ms > 59'000);

  CHECK_FALSE(elect::resign(conn, keys, "svc", {"b", std::nullopt, ""}).resigned);
  auto gone = elect::resign(conn, keys, "svc", {"a", std::nullopt, ""});
  CHECK(gone.resigned);
  CHECK(gone.term == 1);
  auto none = elect::status(conn, keys, "svc");
  CHECK_FALSE(none.leader);
  CHECK(none.id.empty());
  CHECK(none.term == 1);  // the last term handed out

  auto next = elect::campaign(conn, keys, "svc", as("b"));
  CHECK(next.leader);
  CHECK(next.term == 2);
}

TEST_CASE_FIXTURE(ElectFixture, "an expired lease gives a new term, even to the same id") {
  REQUIRE(elect::campaign(conn, keys, "e", as("a", Millis(200))).leader);
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(elect::status(conn, keys, "e").leader);
  auto back = elect::campaign(conn, keys, "e", as("a"));
  CHECK(back.leader);
  CHECK(back.term == 2);
}

TEST_CASE_FIXTURE(ElectFixture, "an incumbent that keeps renewing is never displaced") {
  auto a = elect::campaign(conn, keys, "r", as("a", Millis(300)));
  REQUIRE(a.leader);
  auto other = rcoord::test::shared_server().connect();
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(100ms);
    CHECK(elect::renew(conn, keys, "r", "a", a.term, Millis(300)));
    auto b = elect::campaign(other, keys, "r", as("b", Millis(300)));
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
  REQUIRE(elect::campaign(conn, keys, "x", as("a", Millis(300))).leader);
  auto dup = elect::campaign(conn, keys, "x", {"a", Millis(300), std::nullopt, true, ""});
  CHECK_FALSE(dup.leader);
  CHECK(dup.leader_id == "a");
  // It waits for the lease to run out instead, and then gets a term of its own.
  auto later = elect::campaign(conn, keys, "x", {"a", Millis(300), Millis(3000), true, ""});
  CHECK(later.leader);
  CHECK(later.term == 2);
  CHECK(later.waited_ms >= 200);
}

TEST_CASE_FIXTURE(ElectFixture, "a waiting candidate is woken by the resignation") {
  REQUIRE(elect::campaign(conn, keys, "w", as("a", Millis(30'000))).leader);
  auto resigner = std::thread([&] {
    std::this_thread::sleep_for(200ms);
    auto other = rcoord::test::shared_server().connect();
    elect::resign(other, keys, "w", {"a", std::nullopt, ""});
  });
  auto b = elect::campaign(conn, keys, "w", {"b", Millis(10'000), Millis(10'000), false, ""});
  resigner.join();
  CHECK(b.leader);
  CHECK(b.term == 2);
  CHECK(b.waited_ms >= 190);
  CHECK(b.waited_ms < 450);  // the fallback would come after 500 ms at the earliest
}

TEST_CASE_FIXTURE(ElectFixture, "a waiting candidate takes over when the leader's lease ends") {
  REQUIRE(elect::campaign(conn, keys, "c", as("a", Millis(400))).leader);
  auto b = elect::campaign(conn, keys, "c", {"b", Millis(1000), Millis(3000), false, ""});
  CHECK(b.leader);
  CHECK(b.waited_ms >= 350);
  CHECK(b.waited_ms < 1200);
}

TEST_CASE_FIXTURE(ElectFixture, "observe reports every change in order, expiry included") {
  std::mutex mu;
  std::vector<elect::Status> seen;
  auto observer = std::thread([&] {
    auto own = rcoord::test::shared_server().connect();
    elect::observe(own, keys, "o", Millis(2500), [&](const elect::Status& s) {
      std::lock_guard<std::mutex> hold(mu);
      seen.push_back(s);
    });
  });
  std::this_thread::sleep_for(200ms);
  REQUIRE(elect::campaign(conn, keys, "o", as("a")).leader);                  // term 1
  REQUIRE(elect::resign(conn, keys, "o", {"a", std::nullopt, ""}).resigned);  // vacancy
  REQUIRE(elect::campaign(conn, keys, "o", as("b", Millis(500))).leader);     // term 2
  // b's lease runs out at ~0.7 s, announced by nobody; then c takes over at 1.5 s.
  std::this_thread::sleep_for(1300ms);
  REQUIRE(elect::campaign(conn, keys, "o", as("c")).leader);  // term 3
  observer.join();

  std::lock_guard<std::mutex> hold(mu);
  REQUIRE(seen.size() == 6);
  CHECK_FALSE(seen[0].leader);  // the state at the start: nobody, term 0
  CHECK(seen[0].term == 0);
  CHECK((seen[1].leader && seen[1].id == "a" && seen[1].term == 1));
  CHECK((!seen[2].leader && seen[2].term == 1));
  CHECK((seen[3].leader && seen[3].id == "b" && seen[3].term == 2));
  CHECK((!seen[4].leader && seen[4].term == 2));  // the expiry
  CHECK((seen[5].leader && seen[5].id == "c" && seen[5].term == 3));
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

TEST_CASE_FIXTURE(ElectFixture, "empty names and ids, and bad TTLs, are usage errors") {
  for (auto call :
       {+[](rcoord::Connection&c, const rcoord::Keys&k) { elect::campaign(c, k, "", as("a")); },
        +[](rcoord::Connection&c, const rcoord::Keys&k) { elect::campaign(c, k, "n", as("")); },
        +[](rcoord::Connection&c, const rcoord::Keys&k) {
          elect::campaign(c, k, "n", as("a", Millis(0)));
        }}) {
    try {
      call(conn, keys);
      FAIL("accepted");
    } catch (const rcoord::Error& e) {
      CHECK(e.code() == rcoord::kUsage);
    }
  }
}
