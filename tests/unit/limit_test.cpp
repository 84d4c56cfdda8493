// Rate-limit arithmetic without a server: the conversion of --rate/--burst/--cost into the
// scripts' integers, and the decisions of the model the integration tests hold the Lua to.

#include "limit.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <random>

#include "errors.hpp"
#include "limit_model.hpp"

using namespace std::chrono_literals;
using rcoord::Rate;
using rcoord::limit::Algo;
using rcoord::limit::make_params;
using rcoord::limit::Params;
using rcoord::limit::Raw;
using rcoord::test::LimitModel;

namespace {

constexpr std::int64_t kT0 = 1'700'000'000'000'000;  // a server time in µs

int usage_code(Algo algo, Rate rate, std::optional<std::int64_t> burst, std::int64_t cost) {
  try {
    make_params(algo, rate, burst, cost);
  } catch (const rcoord::Error& e) {
    return e.code();
  }
  return 0;
}

}  // namespace

TEST_CASE("make_params keeps every rate exact as unit/drain") {
  auto p = make_params(Algo::kGcra, Rate{3, 1s}, std::nullopt, 1);
  CHECK(p.burst == 3);  // default burst = N
  CHECK(p.unit == 1'000'000);
  CHECK(p.drain == 3);  // 333333.3 µs per request, not rounded
  CHECK(p.window_us == 1'000'000);

  p = make_params(Algo::kGcra, Rate{5, 1h}, std::nullopt, 1);
  CHECK(p.unit == 720'000'000);
  CHECK(p.drain == 1);

  p = make_params(Algo::kGcra, Rate{100, 10s}, 7, 2);
  CHECK(p.unit == 100'000);
  CHECK(p.drain == 1);
  CHECK(p.burst == 7);
  CHECK(p.cost == 2);
  CHECK(p.window_us == 700'000);

  // window = burst / rate, rounded up so the window algorithms never allow more
  CHECK(make_params(Algo::kFixedWindow, Rate{50, 1s}, 10, 1).window_us == 200'000);
  CHECK(make_params(Algo::kFixedWindow, Rate{3, 1s}, 1, 1).window_us == 333'334);
  CHECK(make_params(Algo::kSlidingWindow, Rate{1'000'000'000, 1s}, 1, 1).window_us == 1);
}

TEST_CASE("make_params: zero, negative and too large values are usage errors") {
  CHECK(usage_code(Algo::kGcra, Rate{0, 1s}, std::nullopt, 1) == rcoord::kUsage);
  CHECK(usage_code(Algo::kGcra, Rate{-5, 1s}, std::nullopt, 1) == rcoord::kUsage);
  CHECK(usage_code(Algo::kGcra, Rate{5, 0s}, std::nullopt, 1) == rcoord::kUsage);
  CHECK(usage_code(Algo::kGcra, Rate{5, 1s}, 0, 1) == rcoord::kUsage);
  CHECK(usage_code(Algo::kGcra, Rate{5, 1s}, -1, 1) == rcoord::kUsage);
  CHECK(usage_code(Algo::kGcra, Rate{5, 1s}, std::nullopt, 0) == rcoord::kUsage);
  CHECK(usage_code(Algo::kGcra, Rate{5, 1s}, std::nullopt, -3) == rcoord::kUsage);
  auto max = std::numeric_limits<std::int64_t>::max();
  CHECK(usage_code(Algo::kGcra, Rate{5, 1s}, max, 1) == rcoord::kUsage);
  CHECK(usage_code(Algo::kGcra, Rate{999'999'999'999'999, 1s}, std::nullopt, 1) ==
        rcoord::kUsage);  // its default burst cannot be exact
  CHECK(usage_code(Algo::kSlidingWindow, Rate{5, 1s}, 1'000'001, 1) == rcoord::kUsage);
  CHECK(usage_code(Algo::kSlidingWindow, Rate{5, 1s}, 1'000'000, 1) == 0);
}

TEST_CASE("make_params: the largest burst is exactly the largest exact capacity") {
  Rate rate{5, 1h};  // unit 7.2e8 µs
  std::int64_t largest = rcoord::limit::kMaxCapacity / 720'000'000;
  auto p = make_params(Algo::kGcra, rate, largest, 1);
  CHECK(p.burst * p.unit <= rcoord::limit::kMaxCapacity);
  CHECK(usage_code(Algo::kGcra, rate, largest + 1, 1) == rcoord::kUsage);
  // the same burst over a fast rate is fine: what counts is burst × period / gcd
  CHECK(usage_code(Algo::kGcra, Rate{1'000'000, 1s}, 1'000'000'000'000, 1) == 0);
}

TEST_CASE("make_params: a cost above the burst is allowed as input, and never allowed") {
  auto p = make_params(Algo::kGcra, Rate{5, 1s}, std::nullopt, 6);
  CHECK(p.never());
  auto huge =
      make_params(Algo::kGcra, Rate{5, 1s}, std::nullopt, std::numeric_limits<std::int64_t>::max());
  CHECK(huge.never());
  CHECK_FALSE(make_params(Algo::kGcra, Rate{5, 1s}, std::nullopt, 5).never());
}

TEST_CASE("parse_algo and ceil_ms") {
  CHECK(rcoord::limit::parse_algo("gcra") == Algo::kGcra);
  CHECK(rcoord::limit::parse_algo("token-bucket") == Algo::kTokenBucket);
  CHECK(rcoord::limit::parse_algo("sliding-window") == Algo::kSlidingWindow);
  CHECK(rcoord::limit::parse_algo("fixed-window") == Algo::kFixedWindow);
  CHECK_FALSE(rcoord::limit::parse_algo("GCRA"));
  CHECK_FALSE(rcoord::limit::parse_algo(""));
  CHECK(rcoord::limit::algo_name(Algo::kSlidingWindow) == "sliding-window");
  CHECK(rcoord::limit::ceil_ms(0) == 0);
  CHECK(rcoord::limit::ceil_ms(1) == 1);
  CHECK(rcoord::limit::ceil_ms(1000) == 1);
  CHECK(rcoord::limit::ceil_ms(1001) == 2);
  CHECK(rcoord::limit::ceil_ms(-1) == -1);
}

TEST_CASE("gcra and token-bucket: a burst at once, then one per emission interval") {
  for (Algo algo : {Algo::kGcra, Algo::kTokenBucket}) {
    CAPTURE(rcoord::limit::algo_name(algo));
    LimitModel m(make_params(algo, Rate{3, 1s}, std::nullopt, 1));
    for (int i = 0; i < 3; ++i) {
      Raw r = m.decide(kT0, -1, false);
      CHECK(r.allowed);
      CHECK(r.remaining == 2 - i);
    }
    Raw denied = m.decide(kT0, -1, false);
    CHECK_FALSE(denied.allowed);
    CHECK(denied.retry_after_us == 333'334);  // 1/3 s, rounded up: never early
    CHECK(denied.reset_after_us == 1'000'000);
    CHECK_FALSE(m.decide(kT0 + 333'333, -1, false).allowed);  // the period boundary
    Raw next = m.decide(kT0 + 333'334, -1, false);
    CHECK(next.allowed);
    CHECK(next.remaining == 0);
  }
}

TEST_CASE("a cost above the burst is denied without consuming, with retry -1") {
  for (Algo algo : {Algo::kGcra, Algo::kTokenBucket, Algo::kSlidingWindow, Algo::kFixedWindow}) {
    CAPTURE(rcoord::limit::algo_name(algo));
    LimitModel big(make_params(algo, Rate{5, 1s}, std::nullopt, 6));
    Raw r = big.decide(kT0, rcoord::limit::kForeverUs, false);  // not even by waiting
    CHECK_FALSE(r.allowed);
    CHECK(r.retry_after_us == -1);
    CHECK(r.remaining == 5);
    LimitModel one(make_params(algo, Rate{5, 1s}, std::nullopt, 5));
    CHECK(one.decide(kT0, -1, false).allowed);  // cost == burst fits an empty limit
  }
}

TEST_CASE("a very large burst stays exact") {
  auto p = make_params(Algo::kGcra, Rate{1'000'000, 1s}, 1'000'000'000'000, 1);
  LimitModel m(p);
  Raw r = m.decide(kT0, -1, false);
  CHECK(r.allowed);
  CHECK(r.remaining == 999'999'999'999);
  m.set_cost(999'999'999'998);
  CHECK(m.decide(kT0, -1, false).allowed);
  m.set_cost(1);
  Raw last = m.decide(kT0, -1, false);
  CHECK(last.allowed);
  CHECK(last.remaining == 0);
  CHECK(last.reset_after_us == 1'000'000'000'000);  // a million seconds to drain
  Raw denied = m.decide(kT0, -1, false);
  CHECK_FALSE(denied.allowed);
  CHECK(denied.retry_after_us == 1);  // a million per second: one per µs
}

TEST_CASE("fixed-window: back-to-back windows of burst/rate from the first request") {
  auto p = make_params(Algo::kFixedWindow, Rate{50, 1s}, 10, 1);  // 200 ms windows
  LimitModel m(p);
  std::int64_t start = kT0 + 123;  // the first request starts the first window
  Raw first = m.decide(start, -1, false);
  CHECK(first.allowed);
  CHECK(first.slot == start);
  CHECK(first.reset_after_us == p.window_us);
  for (int i = 0; i < 9; ++i) CHECK(m.decide(start + 5, -1, false).allowed);
  Raw denied = m.decide(start + p.window_us - 1, -1, false);  // the last µs of the window
  CHECK_FALSE(denied.allowed);
  CHECK(denied.retry_after_us == 1);
  Raw next = m.decide(start + p.window_us, -1, false);  // the first µs of the next
  CHECK(next.allowed);
  CHECK(next.remaining == 9);
  CHECK(next.slot == start + p.window_us);
  CHECK(next.reset_after_us == p.window_us);
  // after every window has ended, the next request starts a new one
  Raw later = m.decide(start + 10 * p.window_us + 777, -1, false);
  CHECK(later.slot == start + 10 * p.window_us + 777);
}

TEST_CASE("sliding-window: an entry leaves exactly one window after it was made") {
  auto p = make_params(Algo::kSlidingWindow, Rate{10, 1s}, 2, 1);  // 200 ms window
  LimitModel m(p);
  CHECK(m.decide(kT0, -1, false).allowed);
  CHECK(m.decide(kT0 + 50'000, -1, false).allowed);
  Raw denied = m.decide(kT0 + 60'000, -1, false);
  CHECK_FALSE(denied.allowed);
  CHECK(denied.retry_after_us == 140'000);  // when the first leaves the window
  CHECK_FALSE(m.decide(kT0 + 199'999, -1, false).allowed);
  CHECK(m.decide(kT0 + 200'000, -1, false).allowed);
  // denied requests were not recorded: the second entry still leaves at +250 ms
  CHECK(m.decide(kT0 + 250'000, -1, false).allowed);
}

TEST_CASE("reservations queue callers in order; too far means nothing is consumed") {
  for (Algo algo : {Algo::kGcra, Algo::kTokenBucket, Algo::kSlidingWindow, Algo::kFixedWindow}) {
    CAPTURE(rcoord::limit::algo_name(algo));
    auto p = make_params(algo, Rate{10, 1s}, 1, 1);  // one per 100 ms
    LimitModel m(p);
    CHECK(m.decide(kT0, -1, false).allowed);
    std::int64_t last_due = kT0;
    for (int i = 0; i < 3; ++i) {
      Raw r = m.decide(kT0 + 1, rcoord::limit::kForeverUs, false);
      CHECK(r.allowed);
      CHECK(r.wait_us > 0);
      CHECK(r.due_us >= last_due + 100'000 - 1);  // each waiter gets a later slot
      last_due = r.due_us;
    }
    Raw too_far = m.decide(kT0 + 2, 50'000, false);
    CHECK_FALSE(too_far.allowed);
    Raw again = m.decide(kT0 + 3, rcoord::limit::kForeverUs, false);
    CHECK(again.due_us >= last_due + 100'000 - 1);
    CHECK(again.due_us <= last_due + 200'000);  // the denied one took no slot
    // giving the last reservation back before it is due frees its slot
    CHECK(m.cancel(kT0 + 4, again));
    Raw replay = m.decide(kT0 + 5, rcoord::limit::kForeverUs, false);
    CHECK(replay.due_us <= again.due_us);
    CHECK_FALSE(m.cancel(replay.due_us, replay));  // due: it has been used
  }
}

TEST_CASE("model: allowed cost never exceeds burst + rate × span, for every algorithm") {
  std::mt19937_64 rng(42);
  for (Algo algo : {Algo::kGcra, Algo::kTokenBucket, Algo::kSlidingWindow, Algo::kFixedWindow}) {
    CAPTURE(rcoord::limit::algo_name(algo));
    auto p = make_params(algo, Rate{7, 1s}, 4, 1);
    std::vector<std::int64_t> allowed_at;
    LimitModel m(p);
    std::int64_t now = kT0 + static_cast<std::int64_t>(rng() % 1'000'000);
    for (int i = 0; i < 5000; ++i) {
      now += static_cast<std::int64_t>(rng() % 40'000);
      if (m.decide(now, -1, false).allowed) allowed_at.push_back(now);
    }
    // every span between two allowed requests, inclusive. A fixed window keeps the bound
    // for spans that start at a window's start (the first request starts one); a span across
    // a window's edge can hold the end of one window and the start of the next: one burst
    // more, the price of counting per window.
    double edge_allowance = algo == Algo::kFixedWindow ? static_cast<double>(p.burst) : 0.0;
    for (std::size_t a = 0; a < allowed_at.size(); a += 7) {
      double extra = a == 0 ? 0.0 : edge_allowance;
      for (std::size_t b = a; b < allowed_at.size(); ++b) {
        double span_s = static_cast<double>(allowed_at[b] - allowed_at[a]) / 1e6;
        double bound = static_cast<double>(p.burst) + 7.0 * span_s + extra;
        REQUIRE(static_cast<double>(b - a + 1) <= bound + 1e-9);
      }
    }
    // and it is not too strict: about 7/s over the ~100 s simulated
    double total_s = static_cast<double>(allowed_at.back() - allowed_at.front()) / 1e6;
    CHECK(static_cast<double>(allowed_at.size()) >= 0.9 * 7.0 * total_s);
  }
}
