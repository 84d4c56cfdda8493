#pragma once
/// Rate limits: GCRA, token bucket, exact sliding-window log and fixed window, each decided
/// by one Lua script on the server's clock (`TIME`), never the client's.
///
/// Keys: `<prefix>{limit:KEY}` a hash {algo, …state}; `…:log` the sliding-window log (a
/// sorted set of `id:cost` members scored by their server time in µs). Both carry a TTL that
/// ends when the state would be empty anyway, so idle limits disappear by themselves.
/// A limit checked with several rates keeps one such pair per rate: the rates sorted by
/// period (then count), the first in the keys above, the k-th (k ≥ 2) in `…:rate<k>` and
/// `…:rate<k>:log`, so the order of the options does not matter.
///
/// Arithmetic: the scripts run on Lua numbers (doubles), so everything is an integer below
/// 2^53. Time is in microseconds. For gcra and token-bucket one unit of cost is `unit` level
/// units and `drain` units leak away per microsecond, where unit/drain = period/N exactly
/// (the rate's count and period divided by their gcd), so no rate is rounded.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"
#include "script.hpp"

namespace rcoord::limit {

enum class Algo { kGcra, kTokenBucket, kSlidingWindow, kFixedWindow };

/// `gcra`, `token-bucket`, `sliding-window`, `fixed-window`; nullopt for anything else.
std::optional<Algo> parse_algo(std::string_view name);
std::string_view algo_name(Algo algo);

/// The largest capacity (burst × unit) the scripts accept: 2^51, so that a level plus any
/// cost, and the reservations of `limit wait` on top, stay exact doubles (below 2^53).
inline constexpr std::int64_t kMaxCapacity = std::int64_t{1} << 51;
/// The largest burst the sliding-window log accepts: it keeps one entry per request.
inline constexpr std::int64_t kMaxLogBurst = 1'000'000;
/// `limit wait --wait forever`, in µs: larger than any wait the arithmetic can express.
inline constexpr std::int64_t kForeverUs = std::int64_t{1} << 52;

/// The integer arguments of the decision scripts, checked and converted from the options.
struct Params {
  Algo algo = Algo::kGcra;
  Rate rate;
  std::int64_t burst = 0;      ///< B: the most cost allowed at once (the `limit` figure)
  std::int64_t cost = 1;       ///< C: the cost of this request (C > B: never allowed)
  std::int64_t unit = 0;       ///< level units one unit of cost adds: period_µs / gcd
  std::int64_t drain = 0;      ///< level units that drain per µs: N / gcd
  std::int64_t window_us = 0;  ///< ceil(B × period / N): the window of the window algorithms
  bool never() const { return cost > burst; }
};

/// Validates and converts. `burst` defaults to the rate's N. Throws Error(kUsage), naming the
/// option, for a zero rate, a burst or cost below 1, and a burst too large to be exact.
/// Pure: no I/O.
Params make_params(Algo algo, Rate rate, std::optional<std::int64_t> burst, std::int64_t cost);

/// What a decision script answers, in its own units (µs). Used by the verbs below, and by
/// the tests that check the scripts against a model.
struct Raw {
  bool allowed = false;
  std::int64_t limit = 0;
  std::int64_t remaining = 0;
  std::int64_t retry_after_us = 0;  ///< 0 when allowed; -1 when never (cost > burst)
  std::int64_t reset_after_us = 0;  ///< until the limit is wholly restored
  std::int64_t wait_us = 0;         ///< a reservation: due this long after now_us
  std::int64_t now_us = 0;          ///< the server time the decision was made at
  std::int64_t due_us = 0;          ///< when the request is allowed (server time)
  std::int64_t slot = 0;            ///< fixed-window: the window a reservation went to
};

/// One run of the decision script. `max_wait_us` < 0: check only; otherwise a request that
/// would be allowed within that many µs is reserved (allowed, wait_us > 0). `peek` changes
/// nothing. `member` names the log entry of a sliding-window request (unique per request).
Raw evaluate(Connection& conn, const Keys& keys, std::string_view key, const Params& p,
             std::int64_t max_wait_us, bool peek, std::string_view member);

/// evaluate()'s script call, for a script that runs it among others (a gate's, gate.hpp);
/// decode its reply with decode_raw().
Call decision_call(const Keys& keys, std::string_view key, const Params& p,
                   std::int64_t max_wait_us, bool peek, std::string_view member);

/// A peek (evaluate() with `peek`, cost 1) as a call for a pipeline of many objects
/// (send_calls); decode with decode_raw().
Call peek_call(const Keys& keys, std::string_view key, const Params& p);

/// The HMGET of the parameters a limit's state keeps from its last decision (algo, unit,
/// drain, burst, window), for decode_stored_params().
Args stored_params_command(const Keys& keys, std::string_view key);
/// Those parameters with cost 1, or nullopt when the state has none or only part of them
/// (state written by an earlier version has no burst). Throws Error(kServer) for a reply of
/// another shape.
std::optional<Params> decode_stored_params(const redisReply* fields);

/// Gives a reservation back if the server's clock has not reached its due time yet.
/// True if given back.
bool cancel(Connection& conn, const Keys& keys, std::string_view key, const Params& p,
            const Raw& reservation, std::string_view member);

/// Member names are the JSON fields of SPEC §3 (`limit check`).
struct Decision {
  bool allowed = false;
  std::int64_t limit = 0;
  std::int64_t remaining = 0;
  std::int64_t retry_after_ms = 0;  ///< 0 when allowed, -1 when never
  std::int64_t reset_after_ms = 0;
};

/// The result of `limit wait`: the decision as of the moment it was allowed, and the wait.
struct Waited {
  Decision decision;
  std::int64_t waited_ms = 0;
};

/// Consumes p.cost if allowed now.
Decision check(Connection& conn, const Keys& keys, std::string_view key, const Params& p);
/// What a check would answer now; consumes nothing.
Decision status(Connection& conn, const Keys& keys, std::string_view key, const Params& p);
/// Reserves the earliest slot within `max_wait` (Millis::max(): no limit) and sleeps until it
/// is due. Not possible within max_wait: denied at once, nothing consumed. A managed signal
/// during the sleep gives the slot back and throws Error(kInterrupted).
Waited wait(Connection& conn, const Keys& keys, std::string_view key, const Params& p,
            Millis max_wait);
/// Deletes the limit's state. True if there was any.
bool reset(Connection& conn, const Keys& keys, std::string_view key);

/// The most rates one limit takes at once (`--rate` given several times).
inline constexpr std::size_t kMaxRates = 8;

/// One rate's part of a decision over several.
struct Rated {
  Rate rate;
  Decision decision;
};

/// A decision over several rates (SPEC §5, "several rates at once"). `decision` is the whole
/// answer: allowed only when every rate allows; `remaining` the smallest, `retry_after_ms`
/// the largest (-1 when some rate never allows), `reset_after_ms` the largest, `limit` that of
/// the rate that binds (the one needing the longest wait when denied, else the one with the
/// least left). `rates` in the order given.
struct MultiDecision {
  Decision decision;
  std::vector<Rated> rates;
};

struct MultiWaited {
  MultiDecision result;
  std::int64_t waited_ms = 0;
};

/// Checks the rates in one script: every rate allows and each consumes p.cost, or nothing is
/// consumed. All params share algo and cost; at most kMaxRates of them, no two rates equal.
MultiDecision check(Connection& conn, const Keys& keys, std::string_view key,
                    const std::vector<Params>& rates);
/// What a check of the rates would answer now; consumes nothing.
MultiDecision status(Connection& conn, const Keys& keys, std::string_view key,
                     const std::vector<Params>& rates);
/// Checks again whenever the last answer says all rates could allow (never polling on a
/// fixed interval), until allowed; a denial consumes nothing, so neither does giving up.
/// Denied at once when the wait needed is longer than what is left of `max_wait`. A managed
/// signal during the sleep throws Error(kInterrupted), nothing consumed. (No slot is
/// reserved, unlike the single-rate wait: waiters are not served in arrival order.)
MultiWaited wait(Connection& conn, const Keys& keys, std::string_view key,
                 const std::vector<Params>& rates, Millis max_wait);

/// The keys of the rate at `position` (0-based) in the sorted order above: state, log.
std::pair<std::string, std::string> rate_keys(const Keys& keys, std::string_view key,
                                              std::size_t position);

/// One run of the script over several rates: each rate's answer, in the order given (each
/// allowed one is consumed only when all allow; `peek` consumes nothing). Used by the verbs
/// above, and by the tests that check the script against a model per rate.
std::vector<Raw> evaluate(Connection& conn, const Keys& keys, std::string_view key,
                          const std::vector<Params>& rates, bool peek);

/// The answer of limit_multi (no I/O), rate by rate in the order of the script's arguments.
/// Throws Error(kServer) for a reply of another shape.
std::vector<Raw> decode_multi(const redisReply* r, std::size_t rates);

/// µs to ms for output, rounded up (a retry after that many ms is never early); -1 stays -1.
std::int64_t ceil_ms(std::int64_t us);

/// The reply of a decision script (no I/O), for tests and fuzzing. Throws Error(kServer)
/// for a reply of another shape.
Raw decode_raw(const redisReply* r);
/// A decision script's answer in the units of the output (ms).
Decision to_decision(const Raw& raw);

}  // namespace rcoord::limit
