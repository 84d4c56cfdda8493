#pragma once
/// Counting semaphores: at most `limit` permits held at once, each holder with its own lease
/// on the server's clock, waiters admitted in arrival order and woken by releases.
///
/// Keys (one hash tag): `<prefix>{sem:NAME}` zset holder -> lease deadline; `…:permits` hash
/// holder -> permits; `…:queue` zset ticket -> arrival; `…:alive` zset ticket -> heartbeat
/// deadline; `…:wants` hash ticket -> permits; `…:seq` arrival counter; `…:meta` {limit};
/// `…:who` hash holder -> who took it (identity.hpp) and when; `…:wake:<token>` one
/// waiter's wake-up list; `…:watchers` zset of `sem wait` callers, each woken on
/// `…:watchers:<member>` (watching.hpp).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "history.hpp"
#include "identity.hpp"
#include "keys.hpp"
#include "lease.hpp"
#include "script.hpp"

namespace rcoord::semaphore {

struct TakeOptions {
  std::int64_t limit = 1;
  std::int64_t permits = 1;  ///< taken all at once, or none
  Millis ttl{30'000};
  std::optional<Millis> wait;  ///< nullopt: try once; Millis::max(): forever
  std::string token;           ///< empty: 128 random bits
  std::string who{};           ///< who takes it: pack() of identity.hpp ("" records none)
  /// Without wait, a busy answer still queues the caller's ticket, as a waiter's does, and is
  /// not recorded as the call's last (a gate's waiter, gate.hpp, which waits by itself and
  /// must try again at least every second to keep its ticket).
  bool enlist = false;
  /// The server time of the busy answer to the caller's first try (0: this call makes it):
  /// the take counts its wait from there (src/lua/lib/contention.lua). A gate's tries again
  /// pass the one its part got first.
  std::int64_t busy_since = 0;
};

/// Member names are the JSON fields of SPEC §3.
struct Taken {
  bool acquired = false;
  std::string name;
  std::string token;
  std::int64_t limit = 0;
  std::int64_t permits = 0;
  std::int64_t holders = 0;  ///< live holders after the call
  std::int64_t in_use = 0;   ///< permits in use after the call
  std::int64_t ahead = 0;    ///< not admitted: earlier waiters still queued ahead of us
  std::int64_t ttl_ms = 0;
  std::int64_t waited_ms = 0;
  /// When the request that took it was sent (not printed): its lease counts from there.
  std::chrono::steady_clock::time_point sent{};
  /// Who took it (TakeOptions::who; not printed): its give-back's history says so.
  std::string who{};
  /// Refused (not printed): the server time of the busy answer to the caller's first try.
  std::int64_t busy_since = 0;
};

/// Takes opts.permits of `limit` permits, waiting up to opts.wait in arrival order.
/// acquired=false when there is no room (or others are ahead) when the wait ends; a waiter
/// that gives up leaves the queue. Throws Error(kUsage) for permits outside 1..limit,
/// Error(kConnection/kServer), Error(kInterrupted) on a signal while waiting.
Taken take(Connection& conn, const Keys& keys, std::string_view name, const TakeOptions& opts);

/// The first try of `opts` with `token` as take() sends it: sem_take, its keys and ARGV. For a
/// script that runs it among others (a gate's, gate.hpp). Throws Error(kUsage) as take().
Call take_call(const Keys& keys, std::string_view name, const std::string& token,
               const TakeOptions& opts);

/// Gives back `token`'s permits (or withdraws its queued ticket). True if it held a live lease.
/// `ending` is what the history records (`released`, a withdrawn waiter's `busy`, a `run`
/// form's `lost` or `timeout`).
bool release(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
             const Ending& ending = {});

/// release(), saying also whether the give-back woke a queued waiter that now fits.
GivenBack release_waking(Connection& conn, const Keys& keys, std::string_view name,
                         std::string_view token, const Ending& ending = {});

/// Extends a live holder's lease to `ttl` from now. False if `token` holds nothing.
bool refresh(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
             Millis ttl);

/// The lease of the permits `taken` (with a TTL of `ttl`), for a command run while holding
/// them: renewed by refresh() to `ttl`, given back by release() (saying whether that woke a
/// waiter). `conn` and `keys` must outlive it.
Lease lease(Connection& conn, const Keys& keys, const Taken& taken, Millis ttl);

struct Holder {
  std::string token;
  std::int64_t permits = 0;
  std::int64_t ttl_ms = 0;
  rcoord::Holder taker{};  ///< who took them, and when
};
struct Status {
  std::string name;
  std::int64_t limit = 0;  ///< as given by the last taker (0: never taken)
  std::int64_t in_use = 0;
  std::int64_t waiting = 0;
  std::vector<Holder> holders;
};
Status status(Connection& conn, const Keys& keys, std::string_view name);

/// What `sem wait` saw (member names are its JSON fields).
struct Freed {
  bool free = false;
  std::string name;
  std::int64_t limit = 0;
  std::int64_t permits = 0;  ///< how many it waited for
  std::int64_t in_use = 0;   ///< permits in use at its last look (when freed by a wake-up: before)
  std::int64_t holders = 0;
  std::int64_t waited_ms = 0;
};
/// Waits up to `wait` (nullopt: look once; Millis::max(): forever) until `permits` of `limit`
/// permits are free, without taking any (watching.hpp): woken by the release that frees them,
/// behind no queued taker and ahead of none. free=false when the wait ran out. Throws
/// Error(kUsage) for permits outside 1..limit, Error(kConnection/kServer/kInterrupted).
Freed wait_free(Connection& conn, const Keys& keys, std::string_view name, std::int64_t limit,
                std::int64_t permits, std::optional<Millis> wait);

/// status() as a call for a pipeline of many objects (send_calls); decode with decode_status.
Call status_call(const Keys& keys, std::string_view name);

// Pure decoders of the scripts' replies (no I/O), for tests and fuzzing. Both throw
// Error(kServer) for a reply of another shape.
/// One answer of sem_take: fills acquired, holders, in_use, ahead and, if acquired, permits.
void decode_take(const redisReply* r, Taken& out);
/// The answer of sem_status: everything but the name.
Status decode_status(const redisReply* r);

}  // namespace rcoord::semaphore
