// Shared (reader) locks through the C++ API, against a real redis-server.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "errors.hpp"
#include "lock.hpp"
#include "redis_server.hpp"
#include "timing.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;
namespace lock = rcoord::lock;

namespace {

struct RwFixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};
  lock::AcquireOptions reader(std::optional<Millis> wait = std::nullopt) {
    lock::AcquireOptions o;
    o.shared = true;
    o.wait = wait;
    return o;
  }
  lock::AcquireOptions writer(std::optional<Millis> wait = std::nullopt) {
    lock::AcquireOptions o;
    o.wait = wait;
    return o;
  }
};

}  // namespace

TEST_CASE_FIXTURE(RwFixture, "many readers at once, never with a writer") {
  auto r1 = lock::acquire(conn, keys, "rw", reader());
  auto r2 = lock::acquire(conn, keys, "rw", reader());
  REQUIRE(r1.acquired);
  REQUIRE(r2.acquired);
  CHECK(r2.fence > r1.fence);
  CHECK_FALSE(lock::acquire(conn, keys, "rw", writer()).acquired);
  auto s = lock::status(conn, keys, "rw");
  CHECK(s.held);
  CHECK(s.mode == "shared");
  CHECK(s.readers == 2);
  CHECK(lock::release(conn, keys, "rw", r1.token));
  CHECK_FALSE(lock::acquire(conn, keys, "rw", writer()).acquired);
  CHECK(lock::release(conn, keys, "rw", r2.token));
  auto w = lock::acquire(conn, keys, "rw", writer());
  REQUIRE(w.acquired);
  CHECK_FALSE(lock::acquire(conn, keys, "rw", reader()).acquired);
  CHECK(lock::status(conn, keys, "rw").mode == "exclusive");
}

TEST_CASE_FIXTURE(RwFixture, "a waiting writer keeps new readers out") {
  auto r1 = lock::acquire(conn, keys, "pref", reader());
  REQUIRE(r1.acquired);
  std::thread waiting_writer([&] {
    auto c = rcoord::test::shared_server().connect();
    auto w = lock::acquire(c, keys, "pref", writer(Millis(5000)));
    CHECK(w.acquired);
    lock::release(c, keys, "pref", w.token);
  });
  CHECK(rcoord::test::wait_blocked(conn, 1));                         // the writer waits
  CHECK_FALSE(lock::acquire(conn, keys, "pref", reader()).acquired);  // the writer goes first
  auto start = std::chrono::steady_clock::now();
  CHECK(lock::release(conn, keys, "pref", r1.token));
  auto late_reader = lock::acquire(conn, keys, "pref", reader(Millis(5000)));
  CHECK(late_reader.acquired);
  CHECK(std::chrono::steady_clock::now() - start <
        rcoord::test::scaled(900ms));  // not the heartbeat
  waiting_writer.join();
}

TEST_CASE_FIXTURE(RwFixture, "a writer's release wakes every waiting reader") {
  auto w = lock::acquire(conn, keys, "wake", writer());
  REQUIRE(w.acquired);
  std::vector<std::thread> readers;
  std::atomic<int> got{0};
  for (int i = 0; i < 3; ++i) {
    readers.emplace_back([&] {
      auto c = rcoord::test::shared_server().connect();
      if (lock::acquire(c, keys, "wake", reader(Millis(5000))).acquired) ++got;
    });
  }
  CHECK(rcoord::test::wait_blocked(conn, 3));  // the three readers wait
  auto start = std::chrono::steady_clock::now();
  CHECK(lock::release(conn, keys, "wake", w.token));
  for (auto& t : readers) t.join();
  CHECK(got == 3);
  CHECK(std::chrono::steady_clock::now() - start < rcoord::test::scaled(900ms));
  CHECK(lock::status(conn, keys, "wake").readers == 3);
}

TEST_CASE_FIXTURE(RwFixture, "a give-back says whether it woke readers or a writer") {
  auto w = lock::acquire(conn, keys, "tell", writer());
  REQUIRE(w.acquired);
  auto enlisted = reader();
  enlisted.enlist = true;  // busy, and entered among the waiting readers
  REQUIRE_FALSE(lock::acquire(conn, keys, "tell", enlisted).acquired);
  CHECK(lock::release_waking(conn, keys, "tell", w.token).woke);  // the readers may go

  auto r1 = lock::acquire(conn, keys, "tell", reader());
  auto r2 = lock::acquire(conn, keys, "tell", reader());
  REQUIRE(r1.acquired);
  REQUIRE(r2.acquired);
  auto waiting_writer = writer();
  waiting_writer.enlist = true;
  REQUIRE_FALSE(lock::acquire(conn, keys, "tell", waiting_writer).acquired);
  auto first_out = lock::release_waking(conn, keys, "tell", r1.token);
  CHECK(first_out.released);
  CHECK_FALSE(first_out.woke);  // r2 still reads: the writer waits on
  auto last_out = lock::release_waking(conn, keys, "tell", r2.token);
  CHECK(last_out.released);
  CHECK(last_out.woke);
}

TEST_CASE_FIXTURE(RwFixture, "readers extend, expire and are broken like writers") {
  auto o = reader();
  o.ttl = Millis(300);
  auto r = lock::acquire(conn, keys, "life", o);
  REQUIRE(r.acquired);
  auto e = lock::extend(conn, keys, "life", r.token, Millis(5000));
  CHECK(e.extended);
  CHECK(e.fence == r.fence);
  std::this_thread::sleep_for(400ms);
  CHECK(lock::status(conn, keys, "life").readers == 1);
  auto b = lock::break_lock(conn, keys, "life");
  CHECK(b.broken);
  CHECK(b.token.empty());
  CHECK(b.readers == 1);
  CHECK_FALSE(lock::extend(conn, keys, "life", r.token, Millis(5000)).extended);
  CHECK(lock::acquire(conn, keys, "life", writer()).acquired);

  auto short_reader = reader();
  short_reader.ttl = Millis(200);
  REQUIRE(lock::acquire(conn, keys, "exp", short_reader).acquired);
  std::this_thread::sleep_for(300ms);
  CHECK(lock::acquire(conn, keys, "exp", writer()).acquired);  // the reader's lease ran out
}
