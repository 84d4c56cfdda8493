#pragma once
/// What `ls`, `top` and `metrics` read of the objects whose status verbs run a script (lock,
/// sem, elect, queue, latch): the same state, read with plain pipelined commands (HMGET, PTTL,
/// ZCOUNT...) and decoded here. A status script costs the server several times what its own
/// commands cost (and checks the type of every key of the object first): over 100,000 objects
/// that was most of a pass. The clock the scripts read per object is read once per batch
/// (TIME) and handed in as `now_ms`.
///
/// A reading goes in rounds, each one pipelined with the other objects' of its batch: the
/// first one reads what the usual object needs (a held lock: its hash, PTTL and whether anyone
/// waits), later ones only what the replies showed is there (a shared lock's readers, a
/// semaphore's holders' permits). A key of another type answers WRONGTYPE, which the listing
/// reports as the object being unreadable; a main hash without the fields rcoord writes is
/// refused here the same way (Error(kServer)).
///
/// Unlike the scripts, the commands of one object are not read atomically: an object changed
/// between two of them is decoded as what it shows, never as an impossible mix (a holder whose
/// hash is gone by its PTTL is free; a lease that ran out is over).

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "elect.hpp"
#include "inventory_object.hpp"
#include "keys.hpp"
#include "latch.hpp"
#include "lock.hpp"
#include "queue.hpp"
#include "reply.hpp"
#include "semaphore.hpp"

namespace rcoord::inventory::reads {

/// One step of an object's reading: the commands of its next round and what makes sense of
/// their replies (a step again), or, once `commands` is empty, what was read.
template <typename Status>
struct Reading {
  std::vector<Args> commands;
  std::function<Reading(std::span<const Reply>)> then;
  /// Done: the state read; nullopt when nothing is left of the object but what rm keeps (a
  /// fence, a term, ids, a history), which is no object to report.
  std::optional<Status> status;
};

/// The server's clock in ms since the epoch, from the reply to TIME.
std::int64_t server_ms(const redisReply* time_reply);

/// `who`, then the server time of the take, joined by the unit separator (as a take script
/// records a taker, src/lua/lib/holder.lua) -> the holder, with held_ms reckoned to `now_ms`;
/// an unknown holder for anything else.
Holder holder_of(std::string_view record, std::int64_t now_ms);

Reading<lock::Status> read_lock(const Keys& keys, const std::string& name, std::int64_t now_ms);
Reading<semaphore::Status> read_sem(const Keys& keys, const std::string& name, std::int64_t now_ms);
Reading<elect::Status> read_elect(const Keys& keys, const std::string& name, std::int64_t now_ms);
/// A queue's counts as `queue stats` would give them after moving what is due, without
/// moving anything: delayed messages whose time came and lapsed leases count as ready (or dead,
/// for a lease of the last delivery allowed).
Reading<queue::Stats> read_queue(const Keys& keys, const std::string& name, std::int64_t now_ms);
Reading<latch::Status> read_latch(const Keys& keys, const std::string& name, std::int64_t now_ms);

}  // namespace rcoord::inventory::reads

namespace rcoord::inventory {

// What the states read here show: the line of `ls`, what `top` shows and the gauges of
// `metrics` (SPEC §5).
void show_lock(Object& o, const lock::Status& s);
void show_sem(Object& o, const semaphore::Status& s);
void show_elect(Object& o, const elect::Status& s);
void show_queue(Object& o, const queue::Stats& s);
void show_latch(Object& o, const latch::Status& s);

}  // namespace rcoord::inventory
