#pragma once
// A model of the four rate-limit algorithms in plain C++ (exact 128-bit arithmetic), used
// only by the tests: unit tests pin its answers at the edges, and the integration tests feed
// it the server times the Lua scripts report and require the same answers from both.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "limit.hpp"

namespace rcoord::test {

class LimitModel {
 public:
  explicit LimitModel(const limit::Params& p) : p_(p) {}

  /// One decision at server time `now` (µs), as the script of p.algo answers it.
  limit::Raw decide(std::int64_t now, std::int64_t max_wait_us, bool peek) {
    if (has_ && now < at_) now = at_;
    switch (p_.algo) {
      case limit::Algo::kGcra:
        return gcra(now, max_wait_us, peek);
      case limit::Algo::kTokenBucket:
        return bucket(now, max_wait_us, peek);
      case limit::Algo::kSlidingWindow:
        return sliding(now, max_wait_us, peek);
      case limit::Algo::kFixedWindow:
        return fixed(now, max_wait_us, peek);
    }
    return {};
  }

  void set_cost(std::int64_t cost) { p_.cost = cost; }

  /// Gives back a reservation that is not due at `now`; false when it is.
  bool cancel(std::int64_t now, const limit::Raw& r) {
    if (has_ && now < at_) now = at_;
    if (now >= r.due_us) return false;
    I cu = I(p_.cost) * p_.unit;
    switch (p_.algo) {
      case limit::Algo::kGcra:
      case limit::Algo::kTokenBucket:  // level_ is capacity minus tokens
        if (!has_) return false;
        level_ = std::max<I>(0, current(now) - cu);
        break;
      case limit::Algo::kSlidingWindow: {
        auto it = std::find_if(log_.begin(), log_.end(), [&](const Entry& e) {
          return e.score == r.due_us && e.cost == p_.cost;
        });
        if (it == log_.end()) return false;
        log_.erase(it);
        break;
      }
      case limit::Algo::kFixedWindow: {
        auto it = counts_.find(r.slot);
        if (it == counts_.end()) return false;
        it->second -= p_.cost;
        if (it->second <= 0) counts_.erase(it);
        break;
      }
    }
    at_ = now;
    return true;
  }

 private:
  __extension__ typedef __int128 I;  // exact products of µs and units
  struct Entry {
    std::int64_t score;
    std::int64_t cost;
  };

  static I div_floor(I a, I b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
  static I div_ceil(I a, I b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
  static std::int64_t n(I v) { return static_cast<std::int64_t>(v); }
  I cap() const { return I(p_.burst) * p_.unit; }

  // The backlog at `now`, drained since the last write.
  I current(std::int64_t now) const {
    if (!has_) return 0;
    I drained = I(now - at_) * p_.drain;
    return drained >= level_ ? 0 : level_ - drained;
  }
  void commit(std::int64_t now, I level) {
    has_ = true;
    at_ = now;
    level_ = level;
  }

  // GCRA and the token bucket are the same arithmetic: level = capacity - tokens.
  limit::Raw leaky(std::int64_t now, std::int64_t max_wait_us, bool peek) {
    constexpr I kMax = I(1) << 52;
    I level = current(now);
    auto left = [&](I l) { return l >= cap() ? 0 : n(div_floor(cap() - l, p_.unit)); };
    auto reset = [&](I l) { return n(div_ceil(l, p_.drain)); };
    if (p_.never()) return {false, p_.burst, left(level), -1, reset(level), 0, now, 0, 0};
    I after = level + I(p_.cost) * p_.unit;
    if (after <= cap()) {
      if (peek) return {true, p_.burst, left(level), 0, reset(level), 0, now, now, 0};
      commit(now, after);
      return {true, p_.burst, left(after), 0, reset(after), 0, now, now, 0};
    }
    std::int64_t retry = n(div_ceil(after - cap(), p_.drain));
    if (peek || max_wait_us < 0 || retry > max_wait_us || after > kMax) {
      return {false, p_.burst, left(level), retry, reset(level), 0, now, 0, 0};
    }
    commit(now, after);
    I at_due = std::max<I>(0, after - I(retry) * p_.drain);
    return {true, p_.burst, left(at_due), 0, reset(after) - retry, retry, now, now + retry, 0};
  }
  limit::Raw gcra(std::int64_t now, std::int64_t w, bool peek) { return leaky(now, w, peek); }
  limit::Raw bucket(std::int64_t now, std::int64_t w, bool peek) { return leaky(now, w, peek); }

  limit::Raw sliding(std::int64_t now, std::int64_t max_wait_us, bool peek) {
    std::int64_t edge = now - p_.window_us;
    std::vector<Entry> live;
    for (const auto& e : log_) {
      if (e.score > edge) live.push_back(e);
    }
    std::stable_sort(live.begin(), live.end(),
                     [](const Entry& a, const Entry& b) { return a.score < b.score; });
    std::int64_t sum = 0;
    for (const auto& e : live) sum += e.cost;
    auto reset_from = [&](std::int64_t from) -> std::int64_t {
      std::int64_t newest = 0;
      bool any = false;
      for (const auto& e : log_) {
        if (e.score > edge) {
          newest = any ? std::max(newest, e.score) : e.score;
          any = true;
        }
      }
      return any ? std::max<std::int64_t>(0, newest + p_.window_us - from) : 0;
    };
    if (!peek) log_ = live;
    auto add = [&](std::int64_t score) {
      log_.push_back({score, p_.cost});
      has_ = true;
      at_ = now;
    };
    if (p_.never()) {
      return {
          false, p_.burst, std::max<std::int64_t>(0, p_.burst - sum), -1, reset_from(now), 0, now,
          0,     0};
    }
    if (sum + p_.cost <= p_.burst) {
      if (!peek) add(now);
      return {true, p_.burst, p_.burst - sum - (peek ? 0 : p_.cost), 0, reset_from(now), 0, now,
              now,  0};
    }
    std::int64_t need = sum + p_.cost - p_.burst;
    std::int64_t freed = 0;
    std::int64_t leaves = now;
    for (const auto& e : live) {
      freed += e.cost;
      if (freed >= need) {
        leaves = e.score;
        break;
      }
    }
    std::int64_t due = leaves + p_.window_us;
    std::int64_t retry = due - now;
    if (peek || max_wait_us < 0 || retry > max_wait_us) {
      return {false,
              p_.burst,
              std::max<std::int64_t>(0, p_.burst - sum),
              retry,
              reset_from(now),
              0,
              now,
              0,
              0};
    }
    std::int64_t gone = 0;
    for (const auto& e : live) {
      if (e.score <= leaves) gone += e.cost;
    }
    add(due);
    return {true, p_.burst, p_.burst - (sum + p_.cost - gone), 0, reset_from(due), retry, now,
            due,  0};
  }

  limit::Raw fixed(std::int64_t now, std::int64_t max_wait_us, bool peek) {
    const std::int64_t w = p_.window_us;
    for (auto it = counts_.begin(); it != counts_.end();) {
      it = it->first + w <= now ? counts_.erase(it) : std::next(it);
    }
    if (counts_.empty()) anchor_ = now;  // nothing live: a window starts now
    std::int64_t current = anchor_ + n(div_floor(now - anchor_, w)) * w;
    auto reset_from = [&](std::int64_t from) -> std::int64_t {
      if (counts_.empty()) return 0;
      return std::max<std::int64_t>(0, counts_.rbegin()->first + w - from);
    };
    auto count = [&](std::int64_t start) {
      auto it = counts_.find(start);
      return it == counts_.end() ? 0 : it->second;
    };
    std::int64_t used = count(current);
    if (p_.never()) {
      return {
          false, p_.burst, std::max<std::int64_t>(0, p_.burst - used), -1, reset_from(now), 0, now,
          0,     0};
    }
    if (used + p_.cost <= p_.burst) {
      if (peek) return {true, p_.burst, p_.burst - used, 0, reset_from(now), 0, now, now, current};
      counts_[current] += p_.cost;
      has_ = true;
      at_ = now;
      return {true, p_.burst, p_.burst - used - p_.cost, 0, reset_from(now), 0, now, now, current};
    }
    std::int64_t start = current + w;
    while (count(start) + p_.cost > p_.burst) start += w;
    std::int64_t retry = start - now;
    if (peek || max_wait_us < 0 || retry > max_wait_us) {
      return {false,
              p_.burst,
              std::max<std::int64_t>(0, p_.burst - used),
              retry,
              reset_from(now),
              0,
              now,
              0,
              0};
    }
    counts_[start] += p_.cost;
    has_ = true;
    at_ = now;
    return {true,  p_.burst, p_.burst - counts_[start], 0, reset_from(start), retry, now,
            start, start};
  }

  limit::Params p_;
  bool has_ = false;
  std::int64_t at_ = 0;
  std::int64_t anchor_ = 0;  // fixed-window: the start of the first window
  I level_ = 0;              // gcra: the backlog; token bucket: capacity minus tokens
  std::vector<Entry> log_;
  std::map<std::int64_t, std::int64_t> counts_;
};

}  // namespace rcoord::test
