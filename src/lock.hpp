#pragma once
/// Locks with a TTL, owner tokens, fencing tokens and push wake-up of waiters: exclusive
/// (one writer) or shared (many readers, no writer among them; writers go first).
///
/// Keys (one hash tag): `<prefix>{lock:NAME}` hash {token, fence, acquired_at, who} of the writer,
/// with the TTL; `…:fence` counter (kept forever, so fences never go back); `…:wake` list a release
/// pushes to and waiting writers BLPOP; `…:readers` zset reader -> lease deadline;
/// `…:rfence` hash reader -> fence; `…:rwho` hash reader -> who took it; `…:writers` / `…:rwait`
/// zsets of waiting writers / readers -> heartbeat deadline; `…:rwake:<token>` one waiting reader's
/// wake-up list; `…:history` stream of its events and `…:taken` the writer's open take (for
/// `expired`), see history.hpp; `…:watchers` zset of `lock wait` callers, each woken on
/// `…:watchers:<token>` (watching.hpp).

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

namespace rcoord::lock {

struct AcquireOptions {
  Millis ttl{30'000};
  std::optional<Millis> wait;  ///< nullopt: try once; Millis::max(): forever
  std::string token;           ///< empty: 128 random bits
  bool shared = false;         ///< a reader: many at once, never with a writer
  std::string who{};           ///< who takes it: pack() of identity.hpp ("" records none)
  /// Without wait, a busy answer ends the call and the history records `busy`; false for a
  /// caller that tries again itself (a Redlock's rounds), which records it when it stops.
  bool busy_is_final = true;
  /// Without wait, a busy answer still enters the caller among the waiting writers, as a
  /// waiter's does (a Redlock's waiter, which waits by itself and must then try again at
  /// least every kWaiterHeartbeat to stay among them).
  bool enlist = false;
  /// The least fence a new take hands out (µs, 0: none): a Redlock proposes the same number
  /// to every node, so that their fences agree (src/lua/lib/fence.lua). Writers only.
  std::int64_t fence_floor = 0;
  /// The server time of the busy answer to the caller's first try (0: this call makes it):
  /// the take counts its wait from there (src/lua/lib/contention.lua). A Redlock's rounds
  /// pass each node's own.
  std::int64_t busy_since = 0;
};

/// A waiter tries again at least this often: to retry if a wake-up was lost (a holder
/// crashed, a woken waiter was killed), and to renew its place among the waiting writers (a
/// waiting writer keeps new readers out only while it renews; one that stops is dropped
/// within three heartbeats).
inline constexpr Millis kWaiterHeartbeat{1000};

/// How a Redlock's answer was reached: the extra JSON fields of SPEC §3. The results below
/// carry it when they come from a Redlock (lock_target.hpp), and not from one server.
struct Votes {
  int nodes = 0;
  int quorum = 0;
  /// Nodes that granted it (acquire, extend), hold it (status), released it (release) or
  /// broke it (break): the JSON's acquired_on, released_on or broken_on.
  int acquired_on = 0;
  std::int64_t validity_ms = 0;  ///< how long the lock is safely ours (0 when it is not)
};

/// Member names are the JSON fields of SPEC §3.
struct Acquired {
  bool acquired = false;
  std::string name;
  std::string token;        ///< ours when acquired; empty when busy
  std::int64_t ttl_ms = 0;  ///< our TTL when acquired; the holder's remaining TTL when busy
  std::int64_t fence = 0;
  std::int64_t waited_ms = 0;
  /// The server time of the first busy answer this call got (0: none; not printed).
  std::int64_t busy_since = 0;
  /// Acquired by a token that already held it: the call only renewed its lease (not printed).
  bool refreshed = false;
  /// When the request that took it was sent (not printed): its lease counts from there.
  std::chrono::steady_clock::time_point sent{};
  /// Who took it (AcquireOptions::who; not printed): its give-back's history says so.
  std::string who{};
  std::optional<Votes> votes{};  ///< a Redlock's
};

/// One try of `opts` (its wait is not waited: only whether the caller will wait) with `token`,
/// as acquire() sends it: lock_acquire or lock_acquire_shared, its keys and ARGV. For a script
/// that runs it among others (a gate's, gate.hpp). Throws Error(kUsage) for an empty name.
Call acquire_call(const Keys& keys, std::string_view name, const std::string& token,
                  const AcquireOptions& opts);

/// Takes `name`, waiting up to opts.wait; a waiter sleeps in BLPOP on a wake list and is
/// woken by the release (and heartbeats once a second while it waits). acquired=false when
/// still busy; a waiter that gives up withdraws. Re-acquiring with the holder's token
/// refreshes the TTL. Throws Error(kConnection/kServer), Error(kInterrupted) on a signal.
Acquired acquire(Connection& conn, const Keys& keys, std::string_view name,
                 const AcquireOptions& opts);

/// The result of a give-back by token (`lock release`).
struct Released {
  bool released = false;
  std::string name;
  std::optional<Votes> votes{};  ///< a Redlock's (nodes, quorum, and acquired_on: released_on)
};

/// True if released; false if `token` does not hold it (as writer or reader). `ending` is
/// what the history records: `released` with its exit code and wait, a withdrawn waiter's
/// `busy`, a `run` form's `lost` or `timeout`. With `announce_on`, a writer's give-back that
/// leaves the lock free is published there (a Redlock's waiters listen on each node).
bool release(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
             const Ending& ending = {}, std::string_view announce_on = {});

/// release(), saying also whether the give-back woke someone to take the lock next: a waiting
/// writer, or the waiting readers.
GivenBack release_waking(Connection& conn, const Keys& keys, std::string_view name,
                         std::string_view token, const Ending& ending = {},
                         std::string_view announce_on = {});

/// Keeps the lock `rest` longer from now instead of giving it back (`lock run --min-hold`), if
/// `token` holds it: a writer's history records `ending` now as release() would (`released`
/// with kept_ms, a `timeout` first when the ending is one), and the lock then ends by its TTL
/// with nothing more recorded; a reader's share the same way, by its deadline. lock_status
/// shows such a take as kept (Kept). False when `token` does not hold it.
bool keep(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
          const Ending& ending, Millis rest);

/// The channel a Redlock's holder announces its give-back on, node by node.
std::string released_channel(const Keys& keys, std::string_view name);

struct Extended {
  bool extended = false;
  std::string name;
  std::int64_t ttl_ms = 0;
  std::int64_t fence = 0;
  std::optional<Votes> votes{};  ///< a Redlock's
};
/// Sets the TTL to `ttl` if `token` still holds the lock; extended=false otherwise.
Extended extend(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
                Millis ttl);

/// A take kept by `lock run --min-hold` after its command ended: when it ended (server time,
/// ms since the epoch), how long ago, and its exit code; -1 / nullopt while it is not kept.
struct Kept {
  std::int64_t ended_at = -1;
  std::int64_t ended_ms = -1;
  std::optional<std::int64_t> exit_code{};
  bool kept() const { return ended_at >= 0; }
};

/// One reader of a shared lock.
struct Reader {
  std::string token;
  std::int64_t ttl_ms = 0;
  Holder holder{};
  Kept kept{};
};

struct Status {
  bool held = false;
  std::string name;
  std::string token;
  std::int64_t ttl_ms = 0;
  std::int64_t fence = 0;  ///< the holder's fence; when free, the last fence handed out
  std::string mode;        ///< "exclusive", "shared" (held by readers), or "" when free
  std::int64_t readers = 0;
  std::int64_t held_ms = -1;  ///< since the writer took it; -1 unknown (readers, older takes)
  std::int64_t waiting = 0;   ///< writers and readers waiting for it
  Holder holder{};            ///< the writer's identity (exclusive)
  std::vector<Reader> reader_list{};  ///< the readers (shared; at most 100)
  Kept kept{};                        ///< the writer's take, kept by --min-hold (exclusive)
  std::optional<Votes> votes{};       ///< a Redlock's
};
Status status(Connection& conn, const Keys& keys, std::string_view name);

/// What `lock wait` saw (member names are its JSON fields).
struct Freed {
  bool free = false;
  std::string name;
  std::int64_t ttl_ms = 0;  ///< not free: the holders' remaining TTL at the last look
  std::int64_t waited_ms = 0;
};
/// Waits up to `wait` (nullopt: look once; Millis::max(): forever) until no writer and no
/// reader holds `name`, without taking it (watching.hpp): woken by the give-back that frees
/// it, which still hands the lock to a waiting taker; free=true then even if that taker has
/// it again already. free=false when the wait ran out. Throws Error(kConnection/kServer),
/// Error(kInterrupted) on a signal.
Freed wait_free(Connection& conn, const Keys& keys, std::string_view name,
                std::optional<Millis> wait);

/// status() as a call for a pipeline of many objects (send_calls), and its reply decoded
/// (no I/O: everything but the name; throws Error(kServer) for a reply of another shape).
Call status_call(const Keys& keys, std::string_view name);
Status decode_status(const redisReply* r);

/// Redlock's fencing step on one node: if `token` holds the lock there, its fence becomes
/// `fence` and the node's fence counter is raised to at least `fence`. False when `token`
/// does not hold it there (nothing changed).
bool raise_fence(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
                 std::int64_t fence);

struct Broken {
  bool broken = false;
  std::string name;
  std::string token;             ///< the writer that held it ("" when readers did)
  std::int64_t readers = 0;      ///< how many readers held it
  std::optional<Votes> votes{};  ///< a Redlock's (nodes and acquired_on: broken_on)
};
/// Deletes the lock whoever holds it (operator override) and wakes a waiter; the history
/// records it as `broken` by `who` (pack()).
Broken break_lock(Connection& conn, const Keys& keys, std::string_view name,
                  const std::string& who = {});

/// The lease of the lock `taken` (acquired with a TTL of `ttl`), for a command run while
/// holding it: renewed by extend() to `ttl`, given back by release() (saying whether that woke
/// a waiter), kept by keep().
/// `conn` and `keys` must outlive it.
Lease lease(Connection& conn, const Keys& keys, const Acquired& taken, Millis ttl);

}  // namespace rcoord::lock
