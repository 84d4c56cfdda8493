// run_holding and queue::consume through the C++ API: real commands under real leases on a
// real redis-server, and the events they report instead of printing.

#include "holding.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "consume.hpp"
#include "errors.hpp"
#include "history.hpp"
#include "lock.hpp"
#include "queue.hpp"
#include "redis_server.hpp"
#include "semaphore.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;
namespace lock = rcoord::lock;
namespace queue = rcoord::queue;

namespace {

struct HoldingFixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};
  std::vector<rcoord::HoldEvent::Kind> events;

  rcoord::HoldObserver record() {
    return [this](const rcoord::HoldEvent& e) { events.push_back(e.kind); };
  }

  static rcoord::HoldingOptions options(std::vector<std::string> command) {
    rcoord::HoldingOptions o;
    o.supervise.command = std::move(command);
    o.supervise.kill_grace = Millis(300);
    o.supervise.margin = Millis(200);
    o.give_back_timeout = Millis(2'000);
    return o;
  }
};

}  // namespace

TEST_CASE_FIXTURE(HoldingFixture, "run_holding gives back after the command, with its code") {
  const Millis ttl{3'000};
  auto taken = lock::acquire(conn, keys, "job", {ttl, std::nullopt, ""});
  REQUIRE(taken.acquired);
  auto lease = lock::lease(conn, keys, taken, ttl);
  CHECK(rcoord::run_holding(lease, options({"sh", "-c", "exit 7"}), record()) == 7);
  CHECK(events.empty());
  CHECK_FALSE(lock::status(conn, keys, "job").held);
}

TEST_CASE_FIXTURE(HoldingFixture, "run_holding keeps a lock for min_hold") {
  const Millis ttl{3'000};
  auto taken = lock::acquire(conn, keys, "kept", {ttl, std::nullopt, ""});
  REQUIRE(taken.acquired);
  auto lease = lock::lease(conn, keys, taken, ttl);
  auto o = options({"sh", "-c", "exit 3"});
  o.min_hold = Millis(60'000);
  CHECK(rcoord::run_holding(lease, o, record()) == 3);
  auto s = lock::status(conn, keys, "kept");
  CHECK(s.held);
  CHECK(s.token == taken.token);
  CHECK(s.ttl_ms > 30'000);  // min_hold, not the 3s lease
  // The history has the hold's end now, with the command's code and how long it is kept;
  // the lease's later lapse is not an `expired`: the take is closed.
  auto page = rcoord::history::read(conn, keys.history("lock", "kept"), std::nullopt, 1);
  REQUIRE(page.events.size() == 1);
  const auto& ended = page.events.front();
  CHECK(ended.event == "released");
  CHECK(ended.token == taken.token);
  auto field = [&](std::string_view name) {
    for (const auto& [k, v] : ended.fields) {
      if (k == name) return v;
    }
    return std::string("(none)");
  };
  CHECK(field("exit_code") == "3");
  CHECK(std::stoll(field("kept_ms")) > 30'000);
  CHECK(conn.command({"EXISTS", keys.aux("lock", "kept", "taken")})->integer == 0);
}

TEST_CASE_FIXTURE(HoldingFixture, "run_holding: a lease lost while the command runs is exit 5") {
  const Millis ttl{1'500};
  auto taken = rcoord::semaphore::take(conn, keys, "pool", {1, 1, ttl, std::nullopt, ""});
  REQUIRE(taken.acquired);
  auto lease = rcoord::semaphore::lease(conn, keys, taken, ttl);
  // The permit is given back behind the command's back: the first renewal finds it gone.
  rcoord::semaphore::release(conn, keys, "pool", taken.token);
  CHECK(rcoord::run_holding(lease, options({"sleep", "600"}), record()) == rcoord::kLost);
  REQUIRE(events.size() == 1);
  CHECK(events.front() == rcoord::HoldEvent::Kind::kLost);
}

TEST_CASE_FIXTURE(HoldingFixture,
                  "run_holding: a lease past its stop point at the start renews once, then runs") {
  const Millis ttl{3'000};
  auto taken = lock::acquire(conn, keys, "late", {ttl, std::nullopt, ""});
  REQUIRE(taken.acquired);
  auto lease = lock::lease(conn, keys, taken, ttl);
  // As if rcoord had been stopped between sending the take and reading its reply: the stop
  // point (taken_at + ttl - kill_grace - margin) has passed, but the lease stands on the server.
  lease.taken_at -= ttl - Millis(400);
  std::string marker = "/tmp/rcoord-holding-" + std::to_string(getpid()) + "-late";
  std::remove(marker.c_str());
  CHECK(rcoord::run_holding(lease, options({"touch", marker}), record()) == rcoord::kYes);
  CHECK(events.empty());
  CHECK(std::fopen(marker.c_str(), "r") != nullptr);  // the command ran
  std::remove(marker.c_str());
  CHECK_FALSE(lock::status(conn, keys, "late").held);  // given back after it
}

TEST_CASE_FIXTURE(HoldingFixture,
                  "run_holding: a late lease that cannot be renewed never runs the command") {
  const Millis ttl{3'000};
  auto taken = lock::acquire(conn, keys, "gone", {ttl, std::nullopt, ""});
  REQUIRE(taken.acquired);
  auto lease = lock::lease(conn, keys, taken, ttl);
  lease.taken_at -= ttl - Millis(400);
  lock::break_lock(conn, keys, "gone");  // the lease ended on the server meanwhile
  std::string marker = "/tmp/rcoord-holding-" + std::to_string(getpid()) + "-gone";
  std::remove(marker.c_str());
  CHECK(rcoord::run_holding(lease, options({"touch", marker}), record()) == rcoord::kLost);
  REQUIRE(events.size() == 1);
  CHECK(events.front() == rcoord::HoldEvent::Kind::kLostUnstarted);
  CHECK(std::fopen(marker.c_str(), "r") == nullptr);  // the command never ran
  CHECK_FALSE(lock::status(conn, keys, "gone").held);
}

TEST_CASE_FIXTURE(HoldingFixture, "run_holding: past max_run the command is stopped, exit 124") {
  const Millis ttl{3'000};
  auto taken = lock::acquire(conn, keys, "slow", {ttl, std::nullopt, ""});
  REQUIRE(taken.acquired);
  auto lease = lock::lease(conn, keys, taken, ttl);
  auto o = options({"sleep", "600"});
  o.supervise.max_run = Millis(300);
  CHECK(rcoord::run_holding(lease, o, record()) == rcoord::kTimedOut);
  REQUIRE(events.size() == 1);
  CHECK(events.front() == rcoord::HoldEvent::Kind::kTimedOut);
  CHECK_FALSE(lock::status(conn, keys, "slow").held);  // given back once the group was gone
}

TEST_CASE_FIXTURE(HoldingFixture, "consume acks on exit 0, nacks otherwise, and reports it") {
  queue::push(conn, keys, "jobs", {"ok", "fail"});
  queue::ConsumeOptions o;
  o.pop.ack_timeout = Millis(3'000);
  o.pop.max_attempts = 1;
  o.supervise.command = {"sh", "-c", "test \"$(cat)\" = ok"};
  o.supervise.kill_grace = Millis(300);
  o.supervise.margin = Millis(200);
  std::vector<queue::ConsumeEvent::Kind> kinds;
  std::vector<queue::NackState> states;
  auto r = queue::consume(conn, keys, "jobs", o, [&](const queue::ConsumeEvent& e) {
    kinds.push_back(e.kind);
    states.push_back(e.state);
  });
  CHECK(r.exit_code == 0);  // no message left (a wait of nullopt: try once)
  CHECK(r.handled == 2);
  REQUIRE(kinds.size() == 1);
  CHECK(kinds.front() == queue::ConsumeEvent::Kind::kFailed);
  CHECK(states.front() == queue::NackState::kDead);  // its only allowed delivery
  auto s = queue::stats(conn, keys, "jobs");
  CHECK(s.ready == 0);
  CHECK(s.in_flight == 0);
  CHECK(s.dead == 1);
}

TEST_CASE_FIXTURE(HoldingFixture, "consume stops after max_messages with the last code") {
  queue::push(conn, keys, "work", {"a", "b", "c"});
  queue::ConsumeOptions o;
  o.pop.ack_timeout = Millis(3'000);
  o.supervise.command = {"sh", "-c", "exit 3"};
  o.supervise.kill_grace = Millis(300);
  o.supervise.margin = Millis(200);
  o.max_messages = 2;
  auto r = queue::consume(conn, keys, "work", o, [](const queue::ConsumeEvent&) {});
  CHECK(r.exit_code == 3);
  CHECK(r.handled == 2);
}

TEST_CASE_FIXTURE(HoldingFixture,
                  "consume: a lease past its stop point at the start gives the message back") {
  queue::push(conn, keys, "late", {"x"});
  queue::ConsumeOptions o;
  // A lease shorter than the kill grace and margin: its stop point has passed when the
  // message arrives, as after a pause between the pop and its reply.
  o.pop.ack_timeout = Millis(400);
  std::string marker = "/tmp/rcoord-holding-" + std::to_string(getpid()) + "-late-message";
  std::remove(marker.c_str());
  o.supervise.command = {"touch", marker};
  o.supervise.kill_grace = Millis(300);
  o.supervise.margin = Millis(200);
  o.max_messages = 1;
  std::vector<queue::ConsumeEvent::Kind> kinds;
  queue::consume(conn, keys, "late", o,
                 [&](const queue::ConsumeEvent& e) { kinds.push_back(e.kind); });
  REQUIRE(kinds.size() == 1);
  CHECK(kinds.front() == queue::ConsumeEvent::Kind::kLostUnstarted);
  CHECK(std::fopen(marker.c_str(), "r") == nullptr);  // the command never ran
  // Ready again at once, its delivery not counted: the next pop is its first attempt.
  auto s = queue::stats(conn, keys, "late");
  CHECK(s.ready == 1);
  CHECK(s.in_flight == 0);
  queue::PopOptions pop;
  pop.ack_timeout = Millis(3'000);
  auto again = queue::pop(conn, keys, "late", pop);
  REQUIRE(again.messages.size() == 1);
  CHECK(again.messages.front().attempt == 1);
}

TEST_CASE_FIXTURE(HoldingFixture, "consume needs a lease per message") {
  queue::ConsumeOptions o;
  o.supervise.command = {"true"};
  CHECK_THROWS_AS(queue::consume(conn, keys, "q", o, [](const queue::ConsumeEvent&) {}),
                  rcoord::Error);
}
