#pragma once
/// Gates (SPEC §6): several locks, shared locks, semaphore permits and rate slots taken all or
/// nothing, with one token for all of them.
///
/// On one server (standalone, or the master Sentinel names) a try of the whole gate is one
/// script (src/lua/gate_take.lua): every part is checked without writing, in one global order
/// (by type, then name), by the primitives' own take scripts in a decide-only mode, and only if
/// every part would be granted are they all taken, and the record written, in the same script.
/// A refused try takes nothing; the part that refused answers (is counted, recorded, enlisted)
/// as its own take does. On a Redis Cluster, where the parts live in different slots (the
/// server answers the script CROSSSLOT, having run nothing), the parts are taken one at a time
/// in the same order through the primitives' own single tries (lock::acquire, semaphore::take,
/// limit::evaluate): the first refusal gives back everything this attempt took; rate slots are
/// consumed only once every other part is held, and a rate's refusal gives back the rates
/// already consumed too (limit_cancel). Two gates never deadlock: neither holds anything while
/// it waits.
///
/// Keys: the parts keep their own keys (`{lock:NAME}`, `{sem:NAME}`, `{limit:NAME}`), so
/// `status`, `ls`, `history` and `metrics` show them as ordinary objects; the taker's note names
/// the gate. `<prefix>{gate:TOKEN}` a hash recording the parts (`n`, then `1`..`n`, each
/// `type US limit US permits US name`), with the parts' TTL: written once every part is held
/// (on one server by the same script), deleted on release, so that a token alone finds its
/// parts. `<prefix>{gate:PARTS}:stats` the take counters of every gate of those parts
/// (counters_name): takes that got every part, calls refused at their first try, holds lost,
/// and the waits; on one server written by the take script itself, on a Cluster by one more
/// command when the call is first refused and when it gets every part.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "history.hpp"
#include "keys.hpp"
#include "lease.hpp"

namespace rcoord::gate {

/// The kinds of part, in the global order of a take.
enum class Kind { kLock = 0, kSharedLock = 1, kSem = 2, kRate = 3 };

/// `lock`, `shared-lock`, `sem`, `rate`: the `type` of a part in the JSON and the record.
std::string_view kind_name(Kind kind);

struct Part {
  Kind kind = Kind::kLock;
  std::string name;
  std::int64_t limit = 0;    ///< sem: how many permits exist
  std::int64_t permits = 1;  ///< sem: how many this gate takes
  Rate rate{};               ///< rate: as `limit check --rate` takes it
  std::string rate_text{};   ///< rate: as given (`10/s`)
};

/// `NAME:LIMIT[:PERMITS]` of --sem; throws Error(kUsage) with a hint when malformed.
Part parse_sem(std::string_view text);
/// `NAME:RATE` of --rate (RATE as `limit check --rate`: `10/s`); throws Error(kUsage).
Part parse_rate(std::string_view text);
/// Sorts `parts` into the global order (kind, then name). Throws Error(kUsage) when there is
/// none, or when one name is given twice for the same kind of object (a lock and a shared lock
/// of one name are the same lock).
void order(std::vector<Part>& parts);

struct TakeOptions {
  Millis ttl{30'000};
  std::optional<Millis> wait;  ///< nullopt: try once; Millis::max(): forever
  std::string token;           ///< empty: 128 random bits
  std::string who{};           ///< who takes every part: pack() of identity.hpp
};

/// One part of a take: what its primitive answered.
struct PartTaken {
  Part part;
  bool acquired = false;
  std::int64_t fence = 0;           ///< lock, shared-lock
  std::int64_t holders = 0;         ///< sem
  std::int64_t in_use = 0;          ///< sem
  std::int64_t remaining = 0;       ///< rate
  std::int64_t ttl_ms = 0;          ///< refused lock: the holders' remaining TTL
  std::int64_t retry_after_ms = 0;  ///< refused rate (-1: never)
  /// Refused lock or sem: the server time of its busy answer (its next tries pass it on).
  std::int64_t busy_since = 0;
  std::chrono::steady_clock::time_point sent{};  ///< when its take was sent
};

struct Taken {
  bool acquired = false;
  std::string token;  ///< ours (also when refused: what a give-back by token would use)
  std::int64_t ttl_ms = 0;
  std::int64_t waited_ms = 0;
  /// Acquired: every part, in the global order. Refused: the parts of the last attempt up to
  /// and including the one that refused (the others given back on a Cluster, never taken on
  /// one server, where they carry what the check saw: acquired, fence 0).
  std::vector<PartTaken> parts;
  /// Refused: the index in `parts` of the part that refused.
  std::size_t refused = 0;
  std::string who{};  ///< TakeOptions::who (not printed)
};

/// Takes every part (in one script on one server, else in the global order: see above) with
/// one token, waiting up to opts.wait:
/// a waiter is enlisted on the part that refused (a lock's waiting writers or readers, a
/// semaphore's queue) and sleeps until its release wakes it, a refused rate's retry-after, or
/// a heartbeat of about a second, then tries the whole gate again. acquired=false when
/// refused at the end: nothing is held then. Throws Error(kUsage) for a bad part,
/// Error(kConnection/kServer), Error(kInterrupted) on a signal (what it held may stay held
/// until give_back_all()).
Taken take(Connection& conn, const Keys& keys, const std::vector<Part>& parts,
           const TakeOptions& opts);

/// Gives back every lock and semaphore part `token` may hold or wait for, and deletes the
/// record: exact and harmless when nothing is held. Rate slots consumed stay consumed.
void give_back_all(Connection& conn, const Keys& keys, const std::vector<Part>& parts,
                   std::string_view token, const Ending& ending = {});

/// The parts the record of `token` lists; nullopt when there is no record (never taken,
/// released, or expired).
std::optional<std::vector<Part>> recorded_parts(Connection& conn, const Keys& keys,
                                                std::string_view token);

/// `<prefix>{gate:TOKEN}`: the record of the parts `token` holds.
std::string record_key(const Keys& keys, std::string_view token);
/// The parts the reply to HGETALL of the record `key` lists; nullopt for an empty reply (no
/// record). Throws Error(kServer) naming `key` when the record is malformed.
std::optional<std::vector<Part>> decode_record(const redisReply* reply, std::string_view key);
/// A part as `ls` shows it: `lock a`, `shared-lock b`, `sem s:4:2`, `rate r:10/s`.
std::string describe(const Part& part);

/// The name a gate's take counters go by (`metrics`: `rcoord_gate_acquired_total{name=…}`):
/// its parts in the global order as `TYPE:NAME`, joined by commas (`lock:db,sem:encoders`), so
/// that every take of the same parts counts in the same place, whatever its token.
std::string counters_name(const std::vector<Part>& ordered);
/// `<prefix>{gate:NAME}:stats`, NAME counters_name(ordered): the gate's take counters
/// (src/lua/lib/contention.lua), beside the parts' own.
std::string counters_key(const Keys& keys, const std::vector<Part>& ordered);

/// One part of a release, an extension or a status.
struct PartState {
  Part part;
  bool held = false;  ///< released / extended / still held by the token
  std::int64_t fence = 0;
};

struct Released {
  bool released = false;  ///< the record existed and every lock and sem part was given back
  std::string token;
  std::vector<PartState> parts;
};
/// Gives back the parts of `token`'s record and deletes it. released=false when there is no
/// record, or when some part was no longer held by the token.
Released release(Connection& conn, const Keys& keys, std::string_view token);

struct Extended {
  bool extended = false;  ///< the record existed and every lock and sem part was extended
  std::string token;
  std::int64_t ttl_ms = 0;
  std::vector<PartState> parts;
};
/// Sets every part's TTL (and the record's) to `ttl` from now. extended=false when there is
/// no record, or some part is no longer held by the token.
Extended extend(Connection& conn, const Keys& keys, std::string_view token, Millis ttl);

struct Status {
  bool held = false;  ///< the record exists and the token holds every lock and sem part
  std::string token;
  std::int64_t ttl_ms = 0;  ///< the record's remaining TTL (0: none)
  std::vector<PartState> parts;
};
Status status(Connection& conn, const Keys& keys, std::string_view token);

/// One lease for all the parts of `taken` (with a TTL of `ttl`), for a command run while
/// holding them: renewed by renewing every part (lost if any part is lost), given back by
/// giving back every part and deleting the record; watched: the union of the parts' keys.
/// `conn` and `keys` must outlive it.
Lease lease(Connection& conn, const Keys& keys, const Taken& taken, Millis ttl);

}  // namespace rcoord::gate
