// The rate-limit scripts against a real redis-server: each answer is compared with the C++
// model fed the same server times, and the key layout, expiry and waits are checked.

#include "limit.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../unit/limit_model.hpp"
#include "errors.hpp"
#include "redis_server.hpp"
#include "timing.hpp"
#include "token.hpp"

using namespace std::chrono_literals;
using rcoord::Millis;
using rcoord::Rate;
using rcoord::limit::Algo;
using rcoord::limit::Raw;
namespace limit = rcoord::limit;

namespace {

struct LimitFixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};

  std::int64_t integer(const rcoord::Args& args) {
    return rcoord::reply_integer(conn.command(args).get());
  }

  std::int64_t server_now_us() {
    rcoord::Reply t = conn.command({"TIME"});
    return std::stoll(rcoord::reply_string(t->element[0])) * 1'000'000 +
           std::stoll(rcoord::reply_string(t->element[1]));
  }
};

constexpr Algo kAlgos[] = {Algo::kGcra, Algo::kTokenBucket, Algo::kSlidingWindow,
                           Algo::kFixedWindow};

void same(const Raw& got, const Raw& want) {
  CHECK(got.allowed == want.allowed);
  CHECK(got.limit == want.limit);
  CHECK(got.remaining == want.remaining);
  CHECK(got.retry_after_us == want.retry_after_us);
  CHECK(got.reset_after_us == want.reset_after_us);
  CHECK(got.wait_us == want.wait_us);
  CHECK(got.due_us == want.due_us);
  CHECK(got.slot == want.slot);
}

struct Pending {
  Raw raw;
  std::string member;
  std::int64_t cost;
};

// Random checks, peeks, reservations and give-backs, with random costs and pauses; every
// answer of the script must be the model's answer at the server time the script used.
void cross_check(LimitFixture& f, Algo algo, Rate rate, std::int64_t burst, unsigned seed) {
  auto p = limit::make_params(algo, rate, burst, 1);
  rcoord::test::LimitModel model(p);
  std::mt19937 rng(seed);
  std::vector<Pending> pending;
  std::int64_t last_now = 0;
  std::string key = "x" + std::to_string(seed);
  for (int i = 0; i < 120; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 12'000));
    auto q = p;
    q.cost = rng() % 10 == 0 ? burst + 1 : 1 + static_cast<std::int64_t>(rng() % burst);
    model.set_cost(q.cost);
    unsigned op = rng() % 20;
    if (op == 0 && !pending.empty()) {
      // give back a reservation that is surely not due yet
      auto it = std::find_if(pending.begin(), pending.end(),
                             [&](const Pending& r) { return r.raw.due_us > last_now + 100'000; });
      if (it == pending.end()) continue;
      q.cost = it->cost;
      model.set_cost(q.cost);
      CAPTURE(i);
      if (limit::cancel(f.conn, f.keys, key, q, it->raw, it->member)) {
        CHECK(model.cancel(last_now, it->raw));
      } else {
        // A busy machine can let the reservation come due between choosing it (by the last
        // answer's server time) and giving it back. The script must then keep it, and may
        // keep it only then: the server's clock after the call has passed its due time.
        CHECK(f.server_now_us() >= it->raw.due_us);
      }
      pending.erase(it);
      continue;
    }
    bool peek = op < 4;
    std::int64_t max_wait = -1;
    if (op >= 12) {
      std::int64_t choices[] = {0, p.window_us / 2, 3 * p.window_us, limit::kForeverUs};
      max_wait = choices[rng() % 4];
    }
    std::string member = rcoord::random_token();
    Raw got = limit::evaluate(f.conn, f.keys, key, q, max_wait, peek, member);
    Raw want = model.decide(got.now_us, max_wait, peek);
    CAPTURE(i);
    CAPTURE(q.cost);
    CAPTURE(peek);
    CAPTURE(max_wait);
    same(got, want);
    if (got.allowed && got.wait_us > 0) pending.push_back({got, member, q.cost});
    last_now = got.now_us;
  }
}

}  // namespace

TEST_CASE_FIXTURE(LimitFixture, "the scripts answer exactly as the model") {
  unsigned seed = 1;
  for (Algo algo : kAlgos) {
    CAPTURE(limit::algo_name(algo));
    cross_check(*this, algo, Rate{50, 1s}, 4, seed++);    // 80 ms windows, 20 ms per cost
    cross_check(*this, algo, Rate{3, 100ms}, 2, seed++);  // 33.3 µs periods: not whole µs
    cross_check(*this, algo, Rate{7, 1s}, 1, seed++);     // burst 1: every request waits
  }
}

TEST_CASE_FIXTURE(LimitFixture, "a check consumes; a status does not") {
  for (Algo algo : kAlgos) {
    CAPTURE(limit::algo_name(algo));
    std::string key(limit::algo_name(algo));
    auto p = limit::make_params(algo, Rate{3, 1h}, std::nullopt, 1);
    auto fresh = limit::status(conn, keys, key, p);
    CHECK(fresh.allowed);
    CHECK(fresh.limit == 3);
    CHECK(fresh.remaining == 3);
    CHECK(fresh.reset_after_ms == 0);
    for (int i = 0; i < 5; ++i) CHECK(limit::status(conn, keys, key, p).remaining == 3);
    CHECK(limit::check(conn, keys, key, p).remaining == 2);
    CHECK(limit::status(conn, keys, key, p).remaining == 2);
    CHECK(limit::check(conn, keys, key, p).allowed);
    CHECK(limit::check(conn, keys, key, p).allowed);
    auto denied = limit::check(conn, keys, key, p);
    CHECK_FALSE(denied.allowed);
    CHECK(denied.remaining == 0);
    CHECK(denied.retry_after_ms > 0);
    CHECK(denied.retry_after_ms <= 3'600'000);
    auto peek = limit::status(conn, keys, key, p);
    CHECK_FALSE(peek.allowed);
    CHECK(peek.retry_after_ms > 0);
  }
}

TEST_CASE_FIXTURE(LimitFixture, "state lives under one hash tag and expires when idle") {
  for (Algo algo : kAlgos) {
    CAPTURE(limit::algo_name(algo));
    std::string key = "idle-" + std::string(limit::algo_name(algo));
    auto p = limit::make_params(algo, Rate{20, 1s}, 2, 1);  // empty again within 100 ms
    auto d = limit::check(conn, keys, key, p);
    REQUIRE(d.allowed);
    std::string main = keys.prefix() + "{limit:" + key + "}";
    CHECK(integer({"EXISTS", main}) == 1);
    std::int64_t ttl = integer({"PTTL", main});
    CHECK(ttl > 0);
    CHECK(ttl <= d.reset_after_ms + 2);
    if (algo == Algo::kSlidingWindow) {
      CHECK(integer({"ZCARD", main + ":log"}) == 1);
      CHECK(integer({"PTTL", main + ":log"}) > 0);
    }
    std::this_thread::sleep_for(Millis(d.reset_after_ms + 50));
    CHECK(integer({"EXISTS", main, main + ":log"}) == 0);
  }
}

TEST_CASE_FIXTURE(LimitFixture, "reset deletes the state, whatever the algorithm") {
  for (Algo algo : kAlgos) {
    CAPTURE(limit::algo_name(algo));
    auto p = limit::make_params(algo, Rate{1, 1h}, std::nullopt, 1);
    CHECK_FALSE(limit::reset(conn, keys, "r"));
    CHECK(limit::check(conn, keys, "r", p).allowed);
    CHECK_FALSE(limit::check(conn, keys, "r", p).allowed);
    CHECK(limit::reset(conn, keys, "r"));
    CHECK(limit::check(conn, keys, "r", p).allowed);
    CHECK(limit::reset(conn, keys, "r"));
  }
}

TEST_CASE_FIXTURE(LimitFixture, "a key of another type or algorithm is refused, untouched") {
  std::string main = keys.prefix() + "{limit:taken}";
  conn.command({"SET", main, "precious"});
  auto p = limit::make_params(Algo::kGcra, Rate{1, 1s}, std::nullopt, 1);
  for (Algo algo : kAlgos) {
    p.algo = algo;
    try {
      limit::check(conn, keys, "taken", p);
      FAIL("expected an error");
    } catch (const rcoord::Error& e) {
      CHECK(e.code() == rcoord::kServer);
      CHECK(std::string(e.what()).find(main) != std::string::npos);
    }
  }
  CHECK_THROWS_AS(limit::reset(conn, keys, "taken"), rcoord::Error);
  CHECK(rcoord::reply_string(conn.command({"GET", main}).get()) == "precious");

  p.algo = Algo::kGcra;
  REQUIRE(limit::check(conn, keys, "mine", p).allowed);
  p.algo = Algo::kSlidingWindow;
  try {
    limit::check(conn, keys, "mine", p);
    FAIL("expected an error");
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kServer);
    CHECK(std::string(e.what()).find("gcra") != std::string::npos);
  }
}

TEST_CASE_FIXTURE(LimitFixture, "wait sleeps until its slot, and beyond max-wait takes nothing") {
  for (Algo algo : kAlgos) {
    CAPTURE(limit::algo_name(algo));
    std::string key = "w-" + std::string(limit::algo_name(algo));
    auto p = limit::make_params(algo, Rate{5, 1s}, 1, 1);  // one per 200 ms
    auto checked = std::chrono::steady_clock::now();       // the next slot is 200 ms after
    REQUIRE(limit::check(conn, keys, key, p).allowed);
    auto asked = std::chrono::steady_clock::now();
    auto w = limit::wait(conn, keys, key, p, Millis(2000));
    auto done = std::chrono::steady_clock::now();
    CHECK(w.decision.allowed);
    CHECK(done - checked >= 199ms);
    CHECK(done - asked < rcoord::test::scaled(1000ms));
    // it says how long it waited: some time, and no more than the call took
    CHECK(w.waited_ms > 0);
    CHECK(w.waited_ms <= std::chrono::duration_cast<Millis>(done - asked).count() + 1);
    // a slot an hour away is beyond a 1 s wait: it gives up at once, consuming nothing
    auto hourly = limit::make_params(algo, Rate{1, 1h}, 1, 1);
    REQUIRE(limit::check(conn, keys, key + "-h", hourly).allowed);
    auto before = limit::status(conn, keys, key + "-h", hourly);
    auto start = std::chrono::steady_clock::now();
    auto no = limit::wait(conn, keys, key + "-h", hourly, Millis(1000));
    CHECK_FALSE(no.decision.allowed);
    CHECK(std::chrono::steady_clock::now() - start < rcoord::test::scaled(1000ms));  // no sleep
    auto after = limit::status(conn, keys, key + "-h", hourly);
    CHECK(after.retry_after_ms <= before.retry_after_ms);
  }
}

TEST_CASE_FIXTURE(LimitFixture, "gcra: another rate for the same key keeps the backlog's time") {
  auto fast = limit::make_params(Algo::kGcra, Rate{10, 1s}, 10, 1);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) REQUIRE(limit::check(conn, keys, "g", fast).allowed);
  // a backlog of one second; at 1/s with burst 10 that is one request's worth
  auto slow = limit::make_params(Algo::kGcra, Rate{1, 1s}, 10, 1);
  auto s = limit::status(conn, keys, "g", slow);
  auto elapsed = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - start);
  CHECK(s.allowed);
  CHECK(s.remaining == 9);
  CHECK(s.reset_after_ms >= 1000 - elapsed.count() - 1);  // less what has drained since
  CHECK(s.reset_after_ms <= 1000);
}

// --- several rates at once (SPEC §5) ---------------------------------------------------------

namespace {

// Random checks and peeks with random costs over several rates of one limit: every rate's
// answer must be its own model's, where the models all peek first and consume only when every
// one of them allows (so a denial consumes from none).
void cross_check_rates(LimitFixture& f, Algo algo, const std::vector<Rate>& rates, unsigned seed) {
  std::vector<limit::Params> ps;
  std::vector<rcoord::test::LimitModel> models;
  std::int64_t smallest = std::numeric_limits<std::int64_t>::max();
  for (const auto& r : rates) {
    ps.push_back(limit::make_params(algo, r, std::nullopt, 1));
    models.emplace_back(ps.back());
    smallest = std::min(smallest, r.count);
  }
  std::mt19937 rng(seed);
  std::string key = "m" + std::to_string(seed);
  int denied_while_another_allowed = 0;
  for (int i = 0; i < 120; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 12'000));
    // now and then a cost that the smallest rate never allows
    std::int64_t cost = rng() % 12 == 0 ? smallest + 1 : 1 + static_cast<std::int64_t>(rng() % 2);
    for (auto& p : ps) p.cost = cost;
    for (auto& m : models) m.set_cost(cost);
    bool peek = rng() % 4 == 0;
    auto got = limit::evaluate(f.conn, f.keys, key, ps, peek);
    REQUIRE(got.size() == ps.size());
    std::vector<Raw> want;
    bool all = true;
    for (std::size_t j = 0; j < ps.size(); ++j) {
      want.push_back(models[j].decide(got[j].now_us, -1, true));
      all = all && want.back().allowed;
    }
    if (all && !peek) {
      for (std::size_t j = 0; j < ps.size(); ++j) {
        want[j] = models[j].decide(got[j].now_us, -1, false);
      }
    }
    bool some_allowed = false;
    for (std::size_t j = 0; j < ps.size(); ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CAPTURE(cost);
      CAPTURE(peek);
      CHECK(got[j].now_us == got[0].now_us);  // one instant for every rate
      same(got[j], want[j]);
      some_allowed = some_allowed || got[j].allowed;
    }
    if (!all && some_allowed) ++denied_while_another_allowed;
  }
  // the case that matters happened: one rate denied while another would have allowed
  CHECK(denied_while_another_allowed > 0);
}

}  // namespace

TEST_CASE_FIXTURE(LimitFixture,
                  "several rates: each answers as its model; a denial consumes none") {
  unsigned seed = 100;
  for (Algo algo : kAlgos) {
    CAPTURE(limit::algo_name(algo));
    cross_check_rates(*this, algo, {Rate{4, 100ms}, Rate{10, 1s}}, seed++);
    cross_check_rates(*this, algo, {Rate{12, 1s}, Rate{3, 50ms}, Rate{8, 400ms}}, seed++);
  }
}

TEST_CASE_FIXTURE(LimitFixture, "several rates: keys per rate under one hash tag, in any order") {
  for (Algo algo : kAlgos) {
    CAPTURE(limit::algo_name(algo));
    std::string key = "k-" + std::string(limit::algo_name(algo));
    auto hourly = limit::make_params(algo, Rate{5, 1h}, std::nullopt, 1);
    auto minutely = limit::make_params(algo, Rate{2, 1min}, std::nullopt, 1);
    auto d = limit::check(conn, keys, key, {hourly, minutely});
    CHECK(d.decision.allowed);
    CHECK(d.decision.remaining == 1);  // the smaller of 4 and 1
    CHECK(d.decision.limit == 2);      // the rate with the least left
    REQUIRE(d.rates.size() == 2);
    CHECK(d.rates[0].rate == Rate{5, 1h});  // in the order given
    CHECK(d.rates[0].decision.remaining == 4);
    CHECK(d.rates[1].decision.remaining == 1);
    // the shorter period owns the main keys, the other `:rate2`; the order given is not
    // what decides it
    std::string main = keys.prefix() + "{limit:" + key + "}";
    CHECK(integer({"EXISTS", main, main + ":rate2"}) == 2);
    CHECK(limit::status(conn, keys, key, minutely).remaining == 1);
    auto s = limit::status(conn, keys, key, {minutely, hourly});
    CHECK(s.rates[0].decision.remaining == 1);
    CHECK(s.rates[1].decision.remaining == 4);
    // a denial by the minutely rate takes nothing from the hourly one
    CHECK(limit::check(conn, keys, key, {hourly, minutely}).decision.allowed);
    auto no = limit::check(conn, keys, key, {hourly, minutely});
    CHECK_FALSE(no.decision.allowed);
    CHECK(no.rates[0].decision.allowed);
    CHECK_FALSE(no.rates[1].decision.allowed);
    CHECK(no.decision.retry_after_ms == no.rates[1].decision.retry_after_ms);
    CHECK(no.decision.limit == 2);
    CHECK(limit::status(conn, keys, key, {hourly, minutely}).rates[0].decision.remaining == 3);
    // reset deletes every rate's keys
    CHECK(limit::reset(conn, keys, key));
    CHECK(integer({"EXISTS", main, main + ":log", main + ":rate2", main + ":rate2:log"}) == 0);
  }
}

TEST_CASE_FIXTURE(LimitFixture,
                  "several rates: wait sleeps until all allow; beyond max-wait none") {
  for (Algo algo : kAlgos) {
    CAPTURE(limit::algo_name(algo));
    std::string key = "mw-" + std::string(limit::algo_name(algo));
    auto fast = limit::make_params(algo, Rate{1, 200ms}, std::nullopt, 1);
    auto slow = limit::make_params(algo, Rate{10, 1h}, std::nullopt, 1);
    REQUIRE(limit::check(conn, keys, key, {fast, slow}).decision.allowed);
    auto start = std::chrono::steady_clock::now();
    auto w = limit::wait(conn, keys, key, {fast, slow}, Millis(1000));
    auto took = std::chrono::steady_clock::now() - start;
    CHECK(w.result.decision.allowed);
    CHECK(took >= 150ms);
    CHECK(took < rcoord::test::scaled(1000ms));
    CHECK(limit::status(conn, keys, key, {fast, slow}).rates[1].decision.remaining == 8);
    // the fast rate needs ~200 ms: a 50 ms wait gives up at once and consumes from neither
    start = std::chrono::steady_clock::now();
    auto no = limit::wait(conn, keys, key, {fast, slow}, Millis(50));
    CHECK_FALSE(no.result.decision.allowed);
    CHECK(std::chrono::steady_clock::now() - start < rcoord::test::scaled(50ms));
    CHECK(limit::status(conn, keys, key, {fast, slow}).rates[1].decision.remaining == 8);
    // a cost the fast rate never allows: denied at once, -1
    auto never = limit::make_params(algo, Rate{1, 200ms}, std::nullopt, 2);
    auto slow2 = limit::make_params(algo, Rate{10, 1h}, std::nullopt, 2);
    auto n = limit::wait(conn, keys, key, {never, slow2}, Millis::max());
    CHECK_FALSE(n.result.decision.allowed);
    CHECK(n.result.decision.retry_after_ms == -1);
  }
}
