#pragma once
/// Queues: plain pops (at most once) and leased pops (at least once) with acks, redelivery,
/// delayed messages and a dead-letter set.
///
/// Keys, all under the hash tag `{queue:NAME}`: `<prefix>{queue:NAME}` hash id → message;
/// `…:ready` list of ids; `…:delayed` zset id by due time; `…:inflight` zset id by lease
/// deadline; `…:dead` zset id by time of death; `…:attempts` hash id → "deliveries/max";
/// `…:wake` the list blocked poppers peek at; `…:seq` the id counter; `…:consumer` hash id →
/// who leased it and when (identity.hpp), while it is in flight. A message's id is in
/// exactly one of ready, delayed, inflight and dead from its push to its ack (or purge), and
/// every move between them is one Lua script, so no crash between two steps can lose it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "identity.hpp"
#include "keys.hpp"
#include "script.hpp"

namespace rcoord::queue {

/// A message as handed out, peeked at or listed.
struct Message {
  std::string id;              ///< decimal, unique per queue for the life of its `…:seq` key
  std::string message;         ///< the bytes, exactly as pushed
  std::int64_t attempt = 0;    ///< pop: this delivery's number (1 = first); peek/dead: so far
  std::int64_t lease_ms = -1;  ///< in_flight(): time left of its lease
  Holder consumer{};           ///< in_flight(): who leased it, and when (`leased_at`)
};

/// Pushes `messages` in one atomic script; with `delay` > 0 they become ready after it.
/// Returns the number of messages waiting (ready + delayed) afterwards.
std::int64_t push(Connection& conn, const Keys& keys, std::string_view name,
                  const std::vector<std::string>& messages, Millis delay = Millis(0));

struct PopOptions {
  std::int64_t count = 1;
  bool lifo = false;           ///< newest first
  std::optional<Millis> wait;  ///< nullopt: try once; Millis::max(): forever
  /// nullopt: plain pop, the message is deleted as it is handed out (at most once). Else the
  /// message is leased for this long and must be acked (at least once).
  std::optional<Millis> ack_timeout;
  std::int64_t max_attempts = 5;  ///< a message is delivered at most this many times
  std::string who{};              ///< who leases them: pack() of identity.hpp ("" records none)
  /// Called after each look at the queue (a waiting pop looks at least every half --timeout)
  /// and, in `queue consume`, after each renewal of a message's lease: its proof of life
  /// (WATCHDOG=1 to systemd). Empty: nothing called.
  std::function<void()> on_alive{};
};

struct Popped {
  std::string name;
  std::vector<Message> messages;  ///< empty: nothing was ready within the wait
  std::int64_t waited_ms = 0;
  /// When the pop that leased them was sent: a lease counts from there.
  std::chrono::steady_clock::time_point sent{};
};

/// Takes up to opts.count ready messages, first moving due delayed messages and expired
/// leases back to ready (or to the dead set after their last allowed delivery). With a wait,
/// blocks until at least one message is there: woken by pushes, and by the next due time.
/// A signal interrupts only the wait (Error(kInterrupted), nothing taken), never a script
/// whose reply carries messages. Throws Error(kUsage/kConnection/kServer).
Popped pop(Connection& conn, const Keys& keys, std::string_view name, const PopOptions& opts);

/// Deletes a leased message. `attempt` > 0: only if that delivery still holds the lease.
/// False when it is not in flight (unknown, acked already, lease reclaimed, or another
/// delivery's).
bool ack(Connection& conn, const Keys& keys, std::string_view name, std::string_view id,
         std::int64_t attempt = 0);

enum class NackState { kNotInFlight, kReady, kDelayed, kDead };

struct NackOptions {
  Millis delay{0};           ///< ready again after this long
  std::int64_t attempt = 0;  ///< > 0: only if that delivery still holds the lease
  /// Give it back as if this delivery never happened (uncounted, at the head of the queue):
  /// for a consumer that stops before it starts the work.
  bool uncounted = false;
};

/// Gives a leased message back: ready again (now or after opts.delay), or dead when that
/// was its last allowed delivery.
NackState nack(Connection& conn, const Keys& keys, std::string_view name, std::string_view id,
               const NackOptions& opts = {});

/// Renews a lease to `lease` from now, if delivery `attempt` (0: any) still holds it.
bool extend(Connection& conn, const Keys& keys, std::string_view name, std::string_view id,
            std::int64_t attempt, Millis lease);

/// Where a message is, for a consumer whose lease on it was lost.
enum class Fate {
  kUnknown,  ///< the server could not be asked
  kPending,  ///< still in the queue (ready, delayed or leased again): it is delivered again
  kDead,     ///< in the dead-letter list
  kGone,     ///< no longer in the queue (acked, purged, removed, flushed): never delivered again
};

/// Where message `id` of queue `name` is now. Throws Error(kConnection/kServer).
Fate fate(Connection& conn, const Keys& keys, std::string_view name, std::string_view id);

/// Member names are the JSON fields of SPEC "queue stats".
struct Stats {
  std::int64_t ready = 0;
  std::int64_t delayed = 0;
  std::int64_t in_flight = 0;
  std::int64_t dead = 0;
};
/// Counts, after moving what is due (like pop does).
Stats stats(Connection& conn, const Keys& keys, std::string_view name);
/// stats() as a call for a pipeline of many objects (send_calls); decode with decode_stats.
Call stats_call(const Keys& keys, std::string_view name);

/// The next `count` ready messages, head first, without taking them.
std::vector<Message> peek(Connection& conn, const Keys& keys, std::string_view name,
                          std::int64_t count);

/// The first `count` messages in flight, soonest lease end first, with their consumers.
std::vector<Message> in_flight(Connection& conn, const Keys& keys, std::string_view name,
                               std::int64_t count);

/// Dead messages, oldest death first: `count` of them from `offset`. Message::attempt is the
/// number of deliveries it had.
std::vector<Message> dead(Connection& conn, const Keys& keys, std::string_view name,
                          std::int64_t offset, std::int64_t count);

/// Puts dead messages back on the ready list with a fresh delivery count: those in `ids`
/// (others are skipped), or all when `ids` is empty. Returns how many. The history records
/// `replayed` by `who` (pack()).
std::int64_t replay(Connection& conn, const Keys& keys, std::string_view name,
                    const std::vector<std::string>& ids, const std::string& who = {});

/// Deletes the dead messages (`dead_only`), or the waiting ones (ready and delayed); never
/// those in flight. Returns how many. The history records `purged` by `who` (pack()).
std::int64_t purge(Connection& conn, const Keys& keys, std::string_view name, bool dead_only,
                   const std::string& who = {});

// Pure decoders of the scripts' replies (no I/O), for tests and fuzzing. All throw
// Error(kServer) for a reply of another shape.
/// queue_pop's reply: returns when the next message is due (ms; 0: now), fills `messages`.
std::int64_t decode_pop(const redisReply* r, std::vector<Message>& messages);
/// A list of messages (queue_peek, queue_dead); `script` names it in errors.
std::vector<Message> decode_messages(const redisReply* r, std::string_view script);
Stats decode_stats(const redisReply* r);

}  // namespace rcoord::queue
