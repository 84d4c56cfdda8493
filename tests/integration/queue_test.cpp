// The queue module through its C++ API, against a real redis-server.

#include "queue.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <thread>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "redis_server.hpp"
#include "timing.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;
namespace queue = rcoord::queue;

namespace {

using Clock = std::chrono::steady_clock;

struct QueueFixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};

  std::vector<std::string> bodies(const std::vector<queue::Message>& messages) {
    std::vector<std::string> out;
    for (const auto& m : messages) out.push_back(m.message);
    return out;
  }
  queue::Popped pop(std::int64_t count = 1, std::optional<Millis> lease = std::nullopt,
                    std::int64_t max_attempts = 5) {
    queue::PopOptions o;
    o.count = count;
    o.ack_timeout = lease;
    o.max_attempts = max_attempts;
    return queue::pop(conn, keys, "q", o);
  }
};

std::int64_t ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<Millis>(Clock::now() - start).count();
}

// blocked_for(wait): a second connection, once the popper is seen blocked and `wait` more has
// passed: after 2.2 s of waiting the popper's fallback has backed off past 3 s, so only a
// wake-up can make it pop soon after. (CHECK, not REQUIRE: it runs on a thread of its own.)
rcoord::Connection blocked_for(Millis wait) {
  auto other = rcoord::test::shared_server().connect();
  CHECK(rcoord::test::wait_blocked(other, 1));
  std::this_thread::sleep_for(wait);
  return other;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("every queue script's SHA1 is the one the server computes") {
  auto conn = rcoord::test::shared_server().connect();
  for (const rcoord::Script* s :
       {&rcoord::lua::kQueuePush, &rcoord::lua::kQueuePop, &rcoord::lua::kQueueAck,
        &rcoord::lua::kQueueNack, &rcoord::lua::kQueueExtend, &rcoord::lua::kQueuePeek,
        &rcoord::lua::kQueueStats, &rcoord::lua::kQueueDead, &rcoord::lua::kQueueReplay,
        &rcoord::lua::kQueuePurge}) {
    CAPTURE(s->name);
    auto r = conn.command({"SCRIPT", "LOAD", std::string(s->body)});
    CHECK(rcoord::reply_string(r.get()) == s->sha1);
  }
}

TEST_CASE_FIXTURE(QueueFixture, "plain pops are FIFO, or LIFO, and delete what they hand out") {
  CHECK(queue::push(conn, keys, "q", {"a", "b", "c", "d"}) == 4);
  CHECK(bodies(pop(2).messages) == Strings{"a", "b"});
  queue::PopOptions lifo;
  lifo.lifo = true;
  CHECK(bodies(queue::pop(conn, keys, "q", lifo).messages) == Strings{"d"});
  auto last = pop(10);
  CHECK(bodies(last.messages) == Strings{"c"});
  CHECK(last.messages[0].attempt == 1);
  CHECK(pop().messages.empty());
  auto s = queue::stats(conn, keys, "q");
  CHECK(s.ready + s.delayed + s.in_flight + s.dead == 0);
  // Nothing is left behind but the id counter.
  auto exists = conn.command({"EXISTS", keys.object("queue", "q"), keys.aux("queue", "q", "ready"),
                              keys.aux("queue", "q", "attempts")});
  CHECK(exists->integer == 0);
}

TEST_CASE_FIXTURE(QueueFixture, "ids are unique and increase") {
  queue::push(conn, keys, "q", {"a", "b"});
  auto got = pop(2).messages;
  REQUIRE(got.size() == 2);
  CHECK(std::stoll(got[1].id) > std::stoll(got[0].id));
  queue::push(conn, keys, "q", {"c"});
  CHECK(std::stoll(pop().messages.at(0).id) > std::stoll(got[1].id));
}

TEST_CASE_FIXTURE(QueueFixture, "a leased message stays until acked, and is gone after") {
  queue::push(conn, keys, "q", {"job"});
  auto r = pop(1, Millis(30'000));
  REQUIRE(r.messages.size() == 1);
  auto m = r.messages[0];
  CHECK(m.attempt == 1);
  CHECK(pop(1, Millis(30'000)).messages.empty());  // leased to us: nobody else gets it
  auto s = queue::stats(conn, keys, "q");
  CHECK(s.in_flight == 1);
  CHECK(s.ready == 0);
  CHECK_FALSE(queue::ack(conn, keys, "q", "999"));
  CHECK(queue::ack(conn, keys, "q", m.id, m.attempt));
  CHECK_FALSE(queue::ack(conn, keys, "q", m.id));  // once only
  s = queue::stats(conn, keys, "q");
  CHECK(s.in_flight + s.ready + s.dead == 0);
}

TEST_CASE_FIXTURE(QueueFixture, "an expired lease is delivered again, counted, to one consumer") {
  queue::push(conn, keys, "q", {"job"});
  auto first = pop(1, Millis(300)).messages.at(0);
  std::this_thread::sleep_for(400ms);
  auto second = pop(1, Millis(30'000)).messages;
  REQUIRE(second.size() == 1);
  CHECK(second[0].id == first.id);
  CHECK(second[0].attempt == 2);
  CHECK(pop(1, Millis(30'000)).messages.empty());
  // The first consumer's lease is over: its ack and nack no longer touch the new delivery.
  CHECK_FALSE(queue::ack(conn, keys, "q", first.id, first.attempt));
  CHECK(queue::nack(conn, keys, "q", first.id, {Millis(0), first.attempt, false}) ==
        queue::NackState::kNotInFlight);
  CHECK(queue::stats(conn, keys, "q").in_flight == 1);
  CHECK(queue::ack(conn, keys, "q", second[0].id, 2));
}

TEST_CASE_FIXTURE(QueueFixture, "after max attempts a message is dead, then replay and purge") {
  queue::push(conn, keys, "q", {"poison"});
  // Three deliveries allowed: two nacks, then a lease that runs out.
  auto m = pop(1, Millis(30'000), 3).messages.at(0);
  CHECK(m.message == "poison");
  CHECK(m.attempt == 1);
  CHECK(queue::nack(conn, keys, "q", m.id) == queue::NackState::kReady);
  m = pop(1, Millis(30'000), 3).messages.at(0);
  CHECK(m.attempt == 2);
  CHECK(queue::nack(conn, keys, "q", m.id) == queue::NackState::kReady);
  m = pop(1, Millis(200), 3).messages.at(0);
  CHECK(m.attempt == 3);
  std::this_thread::sleep_for(300ms);
  CHECK(pop(1, Millis(30'000), 3).messages.empty());  // the third delivery was the last

  auto s = queue::stats(conn, keys, "q");
  CHECK(s.dead == 1);
  CHECK(s.ready + s.in_flight == 0);
  auto dead = queue::dead(conn, keys, "q", 0, 10);
  REQUIRE(dead.size() == 1);
  CHECK(dead[0].message == "poison");
  CHECK(dead[0].attempt == 3);

  CHECK(queue::replay(conn, keys, "q", {"12345"}) == 0);  // not dead: skipped
  CHECK(queue::replay(conn, keys, "q", {dead[0].id}) == 1);
  m = pop(1, Millis(30'000), 1).messages.at(0);
  CHECK(m.attempt == 1);                                                 // a fresh start
  CHECK(queue::nack(conn, keys, "q", m.id) == queue::NackState::kDead);  // max 1: dead at once
  CHECK(queue::purge(conn, keys, "q", true) == 1);
  s = queue::stats(conn, keys, "q");
  CHECK(s.dead + s.ready + s.in_flight + s.delayed == 0);
}

TEST_CASE_FIXTURE(QueueFixture, "a message delivered max times already goes dead, not out") {
  queue::push(conn, keys, "q", {"m"});
  auto m = pop(1, Millis(30'000), 5).messages.at(0);
  CHECK(queue::nack(conn, keys, "q", m.id) == queue::NackState::kReady);
  // A consumer with a lower limit finds it used up.
  CHECK(pop(1, Millis(30'000), 1).messages.empty());
  CHECK(queue::stats(conn, keys, "q").dead == 1);
}

TEST_CASE_FIXTURE(QueueFixture, "delayed messages are ready on time, by the server's clock") {
  queue::push(conn, keys, "q", {"later"}, Millis(600));
  CHECK(queue::push(conn, keys, "q", {"now"}) == 2);  // waiting: ready + delayed
  auto s = queue::stats(conn, keys, "q");
  CHECK(s.delayed == 1);
  CHECK(s.ready == 1);
  CHECK(bodies(pop(5).messages) == Strings{"now"});
  CHECK(queue::peek(conn, keys, "q", 5).empty());
  std::this_thread::sleep_for(700ms);
  CHECK(bodies(queue::peek(conn, keys, "q", 5)) == Strings{"later"});
  CHECK(bodies(pop(5).messages) == Strings{"later"});
}

TEST_CASE_FIXTURE(QueueFixture, "nack with a delay, and an uncounted give-back") {
  queue::push(conn, keys, "q", {"a", "b"});
  auto a = pop(1, Millis(30'000)).messages.at(0);
  CHECK(queue::nack(conn, keys, "q", a.id, {Millis(500), 0, false}) == queue::NackState::kDelayed);
  auto b = pop(1, Millis(30'000)).messages.at(0);
  CHECK(b.message == "b");
  CHECK(pop(1, Millis(30'000)).messages.empty());
  // Given back uncounted: at the head, and its delivery count as before.
  CHECK(queue::nack(conn, keys, "q", b.id, {Millis(0), b.attempt, true}) ==
        queue::NackState::kReady);
  std::this_thread::sleep_for(600ms);
  auto both = pop(2, Millis(30'000)).messages;
  REQUIRE(both.size() == 2);
  CHECK(both[0].message == "b");
  CHECK(both[0].attempt == 1);
  CHECK(both[1].message == "a");
  CHECK(both[1].attempt == 2);
}

TEST_CASE_FIXTURE(QueueFixture, "extend keeps a lease alive") {
  queue::push(conn, keys, "q", {"slow"});
  auto m = pop(1, Millis(400)).messages.at(0);
  CHECK(queue::extend(conn, keys, "q", m.id, m.attempt, Millis(5000)));
  CHECK_FALSE(queue::extend(conn, keys, "q", m.id, m.attempt + 1, Millis(5000)));
  std::this_thread::sleep_for(600ms);
  CHECK(pop(1, Millis(30'000)).messages.empty());
  CHECK(queue::ack(conn, keys, "q", m.id, m.attempt));
  CHECK_FALSE(queue::extend(conn, keys, "q", m.id, m.attempt, Millis(5000)));
}

TEST_CASE_FIXTURE(QueueFixture, "messages are binary-safe: NUL bytes, newlines, 1 MB") {
  std::string nul("a\0b\nc\r\n\xff\xfe", 9);
  std::string big(1 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 256);
  queue::push(conn, keys, "q", {nul, big, ""});
  auto got = pop(3, Millis(30'000)).messages;
  REQUIRE(got.size() == 3);
  CHECK(got[0].message == nul);
  CHECK(got[1].message == big);
  CHECK(got[2].message.empty());
}

TEST_CASE_FIXTURE(QueueFixture, "a big batch is split into several script calls, in order") {
  std::vector<std::string> batch;
  for (int i = 0; i < 20; ++i) batch.push_back(std::string(1 << 20, static_cast<char>('a' + i)));
  CHECK(queue::push(conn, keys, "q", batch) == 20);
  auto got = pop(20).messages;
  REQUIRE(got.size() == 20);
  for (int i = 0; i < 20; ++i) CHECK(got[static_cast<std::size_t>(i)].message[0] == 'a' + i);
}

TEST_CASE_FIXTURE(QueueFixture, "purge deletes waiting messages and leaves leased ones") {
  std::vector<std::string> many;
  for (int i = 0; i < 2500; ++i) many.push_back(std::to_string(i));
  queue::push(conn, keys, "q", many);
  queue::push(conn, keys, "q", {"x", "y"}, Millis(60'000));
  auto m = pop(1, Millis(30'000)).messages.at(0);
  CHECK(queue::purge(conn, keys, "q", false) == 2501);
  auto s = queue::stats(conn, keys, "q");
  CHECK(s.ready + s.delayed == 0);
  CHECK(s.in_flight == 1);
  CHECK(queue::ack(conn, keys, "q", m.id));
}

TEST_CASE_FIXTURE(QueueFixture, "a key of the wrong type is an error, and nothing is changed") {
  conn.command({"SET", keys.aux("queue", "q", "ready"), "not a list"});
  try {
    queue::push(conn, keys, "q", {"m"});
    FAIL("push succeeded");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kServer);
    CHECK(std::string(e.what()).find("queue 'q': key '") != std::string::npos);
    CHECK(std::string(e.what()).find("{queue:q}:ready' holds a string") != std::string::npos);
  }
  CHECK_THROWS_AS(pop(), rcoord::Error);
  CHECK(conn.command({"EXISTS", keys.object("queue", "q")})->integer == 0);
  CHECK(rcoord::reply_string(conn.command({"GET", keys.aux("queue", "q", "ready")}).get()) ==
        "not a list");
}

TEST_CASE_FIXTURE(QueueFixture, "empty names and ids are usage errors") {
  try {
    queue::push(conn, keys, "", {"m"});
    FAIL("accepted an empty name");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kUsage);
  }
  try {
    queue::ack(conn, keys, "q", "");
    FAIL("accepted an empty id");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kUsage);
  }
}

// --- waiting -------------------------------------------------------------------------------

TEST_CASE_FIXTURE(QueueFixture, "a blocked pop wakes as soon as a message is pushed") {
  // Pushed as soon as the pop is seen blocked: its fallback would not come before 500 ms
  // after it began to wait, so a wake-up well within that is the push's.
  Clock::time_point pushed;
  std::thread producer([this, &pushed] {
    auto other = rcoord::test::shared_server().connect();
    CHECK(rcoord::test::wait_blocked(other, 1));
    pushed = Clock::now();
    queue::push(other, keys, "q", {"hello"});
  });
  queue::PopOptions o;
  o.wait = Millis(10'000);
  auto r = queue::pop(conn, keys, "q", o);
  auto popped = Clock::now();
  producer.join();
  REQUIRE(r.messages.size() == 1);
  CHECK(r.messages[0].message == "hello");
  CHECK(popped - pushed < rcoord::test::scaled(400ms));
}

TEST_CASE_FIXTURE(QueueFixture, "a blocked pop times out empty after its wait") {
  queue::PopOptions o;
  o.wait = Millis(300);
  auto start = Clock::now();
  CHECK(queue::pop(conn, keys, "q", o).messages.empty());
  CHECK(ms_since(start) >= 300);
  CHECK(ms_since(start) < rcoord::test::scaled(3000ms).count());  // ended by its wait, not hung
}

TEST_CASE_FIXTURE(QueueFixture, "a blocked pop is woken by a delayed push and pops it on time") {
  Clock::time_point before, after;
  std::thread producer([this, &before, &after] {
    auto other = blocked_for(2200ms);
    before = Clock::now();
    queue::push(other, keys, "q", {"due"}, Millis(300));
    after = Clock::now();
  });
  queue::PopOptions o;
  o.wait = Millis(20'000);
  auto r = queue::pop(conn, keys, "q", o);
  auto popped = Clock::now();
  producer.join();
  REQUIRE(r.messages.size() == 1);
  CHECK(popped - before >= 300ms);                              // not before it was due
  CHECK(popped - after < 300ms + rcoord::test::scaled(400ms));  // when due, not by the fallback
}

TEST_CASE_FIXTURE(QueueFixture, "a blocked pop takes a message whose lease ran out") {
  queue::push(conn, keys, "q", {"job"});
  auto start = Clock::now();  // before the lease began
  auto first = pop(1, Millis(800)).messages.at(0);
  auto other = rcoord::test::shared_server().connect();
  queue::PopOptions o;
  o.wait = Millis(10'000);
  o.ack_timeout = Millis(30'000);
  auto r = queue::pop(other, keys, "q", o);
  auto took = ms_since(start);
  REQUIRE(r.messages.size() == 1);
  CHECK(r.messages[0].id == first.id);
  CHECK(r.messages[0].attempt == 2);
  CHECK(took >= 800);
  CHECK(took < rcoord::test::scaled(1200ms).count());
}

TEST_CASE_FIXTURE(QueueFixture, "a nack with a delay wakes blocked pops so they pop it on time") {
  queue::push(conn, keys, "q", {"job"});
  auto held = pop(1, Millis(60'000)).messages.at(0);
  Clock::time_point before, after;
  std::thread nacker([this, held, &before, &after] {
    auto other = blocked_for(2200ms);
    before = Clock::now();
    queue::nack(other, keys, "q", held.id, {Millis(300), 0, false});
    after = Clock::now();
  });
  queue::PopOptions o;
  o.wait = Millis(20'000);
  auto r = queue::pop(conn, keys, "q", o);
  auto popped = Clock::now();
  nacker.join();
  REQUIRE(r.messages.size() == 1);
  CHECK(r.messages[0].attempt == 2);
  CHECK(popped - before >= 300ms);                              // not before it was due
  CHECK(popped - after < 300ms + rcoord::test::scaled(400ms));  // when due, not by the fallback
}

TEST_CASE_FIXTURE(QueueFixture, "concurrent leased pops never hand one message to two") {
  std::vector<std::string> many;
  for (int i = 0; i < 400; ++i) many.push_back(std::to_string(i));
  queue::push(conn, keys, "q", many);
  std::vector<std::vector<queue::Message>> got(4);
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < got.size(); ++w) {
    workers.emplace_back([this, &got, w] {
      auto c = rcoord::test::shared_server().connect();
      queue::PopOptions o;
      o.ack_timeout = Millis(60'000);
      o.count = 3;
      for (;;) {
        auto r = queue::pop(c, keys, "q", o);
        if (r.messages.empty()) return;
        for (auto& m : r.messages) got[w].push_back(m);
      }
    });
  }
  for (auto& t : workers) t.join();
  std::set<std::string> seen;
  std::size_t total = 0;
  for (const auto& list : got) {
    for (const auto& m : list) seen.insert(m.message);
    total += list.size();
  }
  CHECK(total == 400);
  CHECK(seen.size() == 400);
  CHECK(queue::stats(conn, keys, "q").in_flight == 400);
}
