// Supervision with --max-run through the C++ API: a real command, a real lock on a real
// redis-server renewed by the supervisor.

#include "supervise.hpp"

#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>

#include "lock.hpp"
#include "redis_server.hpp"
#include "timing.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;
namespace lock = rcoord::lock;
using Clock = std::chrono::steady_clock;

namespace {

struct SuperviseFixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};

  // The lease of the lock held by `taken`, as `lock run` renews it.
  rcoord::Lease lease_of(const lock::Acquired& taken, Millis ttl) {
    return lock::lease(conn, keys, taken, ttl);
  }
};

std::string temp_path(const std::string& what) {
  return "/tmp/rcoord-supervise-" + std::to_string(getpid()) + "-" + what;
}

}  // namespace

TEST_CASE_FIXTURE(SuperviseFixture,
                  "past max_run a command that ignores SIGTERM is killed, its group with it") {
  const Millis ttl{3'000};
  auto taken = lock::acquire(conn, keys, "hung", {ttl, std::nullopt, ""});
  REQUIRE(taken.acquired);
  auto lease = lease_of(taken, ttl);
  std::string pids = temp_path("pids");
  rcoord::SuperviseOptions opts{
      {"sh", "-c", "trap '' TERM; sleep 600 & echo $$ $! >\"$0\"; wait", pids},
      {},
      Millis(300),
      Millis(200)};
  opts.max_run = Millis(500);
  auto start = Clock::now();
  auto r = rcoord::supervise(opts, lease);
  auto took = Clock::now() - start;
  CHECK(r.timed_out);
  CHECK_FALSE(r.lost);
  CHECK(r.exit_code == 128 + SIGKILL);  // SIGTERM was ignored: SIGKILL after the grace
  CHECK(took >= 800ms);                 // max_run + kill_grace
  pid_t group = 0;
  pid_t child = 0;
  std::ifstream(pids) >> group >> child;
  std::remove(pids.c_str());
  REQUIRE(group > 0);
  CHECK(kill(-group, 0) != 0);  // the whole group is gone, the background sleep included
  CHECK(kill(child, 0) != 0);
  // supervise does not give back: the caller does. The lock is still ours.
  auto s = lock::status(conn, keys, "hung");
  CHECK(s.held);
  CHECK(s.token == taken.token);
}

TEST_CASE_FIXTURE(SuperviseFixture, "a max_run longer than the lease: renewals go on until it") {
  // A short lease, scaled as an upper bound is: a renewal late by more than the lease's margin
  // (a starved or emulated CPU) would end it as a loss instead.
  const Millis ttl = rcoord::test::scaled(Millis(1'000));
  auto taken = lock::acquire(conn, keys, "long", {ttl, std::nullopt, ""});
  REQUIRE(taken.acquired);
  auto lease = lease_of(taken, ttl);
  rcoord::SuperviseOptions opts{{"sleep", "600"}, {}, Millis(300), Millis(200)};
  opts.max_run = 2 * ttl;
  auto r = rcoord::supervise(opts, lease);
  CHECK(r.timed_out);
  CHECK_FALSE(r.lost);
  CHECK(r.exit_code == 128 + SIGTERM);  // sleep dies of the SIGTERM
  auto s = lock::status(conn, keys, "long");
  CHECK(s.held);  // two TTLs after the lease was taken: renewed
  CHECK(s.token == taken.token);
}

TEST_CASE_FIXTURE(SuperviseFixture, "a command that ends within max_run is not timed out") {
  const Millis ttl{3'000};
  auto taken = lock::acquire(conn, keys, "quick", {ttl, std::nullopt, ""});
  REQUIRE(taken.acquired);
  auto lease = lease_of(taken, ttl);
  rcoord::SuperviseOptions opts{{"sh", "-c", "exit 3"}, {}, Millis(300), Millis(200)};
  opts.max_run = Millis(5'000);
  auto start = Clock::now();
  auto r = rcoord::supervise(opts, lease);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 3);
  CHECK(Clock::now() - start < 4s);  // not held up until max_run
}
