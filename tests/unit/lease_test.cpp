// The timetable of a supervised lease (SPEC §5, src/supervise.hpp): when the command must be
// stopped and killed, when renewals go out, and which --kill-grace fits.

#include <doctest/doctest.h>

#include <chrono>

#include "errors.hpp"
#include "supervise.hpp"

using rcoord::LeaseTimes;
using rcoord::Millis;
using Clock = std::chrono::steady_clock;

TEST_CASE("the command is stopped kill-grace plus one timeout before the lease can end") {
  auto sent = Clock::time_point{} + std::chrono::hours(1);
  LeaseTimes t{Millis(30'000), Millis(10'000), Millis(2'000), sent + Millis(30'000)};
  CHECK(t.stop_at() == sent + Millis(18'000));  // SIGTERM by then
  CHECK(t.kill_by() == sent + Millis(28'000));  // SIGKILL by then: one timeout to spare
  // renewals every TTL/3 while that is less than half the way to the stop point
  CHECK(t.next_renewal(sent) == sent + Millis(9'000));
  t.renewed(sent + Millis(9'000));
  CHECK(t.end == sent + Millis(39'000));
  CHECK(t.stop_at() == sent + Millis(27'000));
}

TEST_CASE("short leases renew early, leaving up to two thirds of the window to the renewal") {
  auto sent = Clock::time_point{} + std::chrono::hours(1);
  // TTL 1s, grace 333ms, timeout 200ms: the stop point is 467ms after the send
  LeaseTimes t{Millis(1'000), Millis(333), Millis(200), sent + Millis(1'000)};
  CHECK(t.stop_at() == sent + Millis(467));
  // (two thirds of the window is left for the renewal: 311.33ms)
  CHECK(t.next_renewal(sent) == sent + std::chrono::nanoseconds(155'666'667));
  // a take whose lease is already past its stop point renews at once (and is lost there)
  CHECK(t.next_renewal(sent + Millis(600)) == sent + Millis(600));
}

TEST_CASE("a renewal is left 1.5s before the stop point, for TCP to resend lost packets") {
  auto sent = Clock::time_point{} + std::chrono::hours(1);
  // TTL 6s, grace 2s, timeout 1.5s: the stop point is 2.5s after the send. Renewing half way
  // would leave 1.25s: two lost packets in a row (resent after 0.2s, then 0.4s more, then
  // 0.8s more) would cost the lease.
  LeaseTimes t{Millis(6'000), Millis(2'000), Millis(1'500), sent + Millis(6'000)};
  CHECK(t.next_renewal(sent) == sent + Millis(1'000));
  // the room never takes more than two thirds of the window
  LeaseTimes tight{Millis(3'000), Millis(1'000), Millis(800), sent + Millis(3'000)};
  CHECK(tight.next_renewal(sent) == sent + Millis(400));
}

TEST_CASE("the default kill grace is the smaller of 10s and a third of the TTL") {
  CHECK(rcoord::default_kill_grace(Millis(30'000)) == Millis(10'000));
  CHECK(rcoord::default_kill_grace(Millis(60'000)) == Millis(10'000));
  CHECK(rcoord::default_kill_grace(Millis(3'000)) == Millis(1'000));
  CHECK(rcoord::fit_kill_grace(std::nullopt, Millis(30'000), Millis(2'000), "--ttl") ==
        Millis(10'000));
  CHECK(rcoord::fit_kill_grace(Millis(27'000), Millis(30'000), Millis(2'000), "--ttl") ==
        Millis(27'000));
}

TEST_CASE("short leases: the default timeout and grace shrink to fit any lease of 1s or more") {
  using rcoord::fit_kill_grace;
  using rcoord::run_margin;
  for (Millis ttl : {Millis(1'000), Millis(1'500), Millis(3'000), Millis(6'000), Millis(30'000)}) {
    Millis margin = run_margin(Millis(2'000), false, ttl);
    Millis grace = fit_kill_grace(std::nullopt, ttl, margin, "--ttl");
    CHECK(grace > Millis(0));
    CHECK(grace + margin < ttl);
  }
  CHECK(run_margin(Millis(2'000), false, Millis(30'000)) == Millis(2'000));  // long: unchanged
  CHECK(run_margin(Millis(2'000), false, Millis(3'000)) == Millis(750));
  CHECK(run_margin(Millis(2'000), true, Millis(3'000)) == Millis(2'000));  // given: kept
  // A --timeout given with the default grace: the grace shrinks to what is left.
  CHECK(fit_kill_grace(std::nullopt, Millis(3'000), Millis(2'000), "--ttl") == Millis(500));
}

TEST_CASE("a kill grace or TTL that leaves no time to stop the command is a usage error") {
  auto code_of = [](auto fn) {
    try {
      fn();
    } catch (const rcoord::Error& e) {
      return e.code();
    }
    return rcoord::kYes;
  };
  // 28s grace + 2s timeout = the whole 30s lease
  CHECK(code_of([] {
          rcoord::fit_kill_grace(Millis(28'000), Millis(30'000), Millis(2'000), "--ttl");
        }) == rcoord::kUsage);
  // a --timeout as long as the lease leaves no room for any grace
  CHECK(code_of([] {
          rcoord::fit_kill_grace(std::nullopt, Millis(3'000), Millis(3'000), "--ttl");
        }) == rcoord::kUsage);
  try {
    rcoord::fit_kill_grace(std::nullopt, Millis(3'000), Millis(3'000), "--ack-timeout");
    FAIL("no usage error");
  } catch (const rcoord::Error& e) {
    CHECK(std::string(e.what()).find("--ack-timeout 3s is too short for --timeout 3s") !=
          std::string::npos);
    CHECK(std::string(e.hint()).find("--ack-timeout longer than 3001ms") != std::string::npos);
  }
}
