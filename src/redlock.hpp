#pragma once
/// Redlock: one lock over N >= 3 independent Redis masters. Each node keeps an ordinary
/// rcoord lock (the same scripts and keys as lock.hpp); the lock is ours when a quorum
/// (N/2+1) granted it within the TTL less the clock drift allowance.
///
/// Every operation goes to all nodes in parallel (one thread per node, each with a short
/// per-node timeout), so one slow or dead node costs its timeout once, not once per node.
/// A failed acquisition gives back whatever it got before it retries or returns. A waiter
/// listens on every node for the holder's give-back (announced by each node), and tries again
/// once a quorum of nodes announced one, or the holder's lease has run out. The fence reported is
/// made to increase across acquisitions: the highest fence the granting nodes handed out is written
/// back to each of them when they differ (see docs/tour.md, "Redlock in detail", for what this
/// does, and docs/guarantees.md, "Redlock", for what it does and does not guarantee).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"
#include "lease.hpp"
#include "lock.hpp"
#include "url.hpp"

namespace rcoord::redlock {

/// How a Redlock answer was reached (lock.hpp).
using Votes = lock::Votes;

struct Acquired {
  lock::Acquired lock;
  Votes votes;
};
struct Extended {
  lock::Extended lock;
  Votes votes;
};
struct Status {
  lock::Status lock;
  Votes votes;
};
struct Released {
  bool released = false;
  std::string name;
  int nodes = 0;
  int quorum = 0;
  int released_on = 0;
  bool woke = false;  ///< (not printed) the give-back woke a waiter on some node
};
struct Broken {
  lock::Broken lock;
  int nodes = 0;
  int broken_on = 0;
};

/// The clock drift allowance of a lease of `ttl`: 1% plus 2 ms (Redis' Redlock description).
Millis drift(Millis ttl);

/// The per-node timeout for leases of `ttl`: a tenth of the TTL, at least 100 ms (a loaded
/// machine must still answer), at most `io_timeout`.
Millis node_timeout(Millis io_timeout, Millis ttl);

/// Two endpoints (by index) that reach one server, and the address they share.
struct SameServer {
  std::size_t first = 0;
  std::size_t second = 0;
  std::string address;  ///< `127.0.0.1:6379`, `[::1]:6379`, or `unix:<device>:<inode>`
};

/// The first two of `endpoints` that reach one server by address: the same Unix socket (by
/// its inode), or the same port on a host address both names resolve to (`localhost`,
/// `127.0.0.1`, `127.1` and `[::ffff:127.0.0.1]` are one). A name that does not resolve is
/// left out (its node does not answer). nullopt when there is none.
std::optional<SameServer> same_address(const std::vector<Endpoint>& endpoints);

class Redlock {
 public:
  /// Does not connect yet, but resolves the endpoints' host names. `per_node` bounds every
  /// connect and reply of one node. Throws Error(kUsage) for fewer than 3 endpoints, and for
  /// two that reach one server (same_address()): its vote would count twice. The first call
  /// below also asks every node its run_id (one round trip, once) and throws Error(kUsage)
  /// when two nodes that answer are one server under two addresses.
  Redlock(const std::vector<Endpoint>& endpoints, Millis per_node, Keys keys);

  int nodes() const { return static_cast<int>(conns_.size()); }
  int quorum() const { return nodes() / 2 + 1; }

  /// Takes `name` on a quorum, trying again as give-backs are announced (or the holder's
  /// lease runs out) until opts.wait runs out.
  /// acquired=false when busy. Throws Error(kConnection) naming how many nodes answered
  /// when fewer than a quorum did, Error(kUsage) for --shared, Error(kInterrupted) when a
  /// managed signal ends the wait (nothing is then held).
  Acquired acquire(std::string_view name, const lock::AcquireOptions& opts);

  /// Releases on every node. released=true when any node released it. Throws
  /// Error(kConnection) when fewer than a quorum answered (after releasing where it could).
  /// `ending` is what each node's history records (lock::release).
  Released release(std::string_view name, std::string_view token, const Ending& ending = {});

  /// Keeps it `rest` longer on every node instead of releasing it (lock::keep). Throws
  /// Error(kConnection) when fewer than a quorum answered. No node is waited for past
  /// `deadline`.
  void keep(std::string_view name, std::string_view token, const Ending& ending, Millis rest,
            std::chrono::steady_clock::time_point deadline);

  /// Extends on every node: extended when a quorum extended it within the new validity;
  /// extended=false when it cannot be ours any more (too many nodes say another holds it or
  /// it is gone). Throws Error(kConnection) when too few nodes answered to tell. No node is
  /// waited for past `deadline`.
  Extended extend(std::string_view name, std::string_view token, Millis ttl,
                  std::chrono::steady_clock::time_point deadline =
                      std::chrono::steady_clock::time_point::max());

  /// Held when one token holds it on a quorum. Throws Error(kConnection) without a quorum.
  Status status(std::string_view name);

  /// Deletes it on every node that answers. Throws Error(kConnection) without a quorum
  /// (after breaking it where it could).
  Broken break_lock(std::string_view name);

  /// The lease of the lock `taken` (acquired with a TTL of `ttl`), for a command run while
  /// holding it: renewed by a quorum extend() to `ttl` (no node waited for past the
  /// deadline), given back by release(), kept by extend(). Its length leaves out the drift
  /// allowance, so the supervisor never believes in a lease the nodes may have ended. This
  /// Redlock must outlive it.
  Lease lease(const Acquired& taken, Millis ttl);

  /// The history of lock `name` as a majority of the nodes has it (each node keeps its own):
  /// an event counts when a quorum of nodes recorded it (the same event and token), at the
  /// time the quorum-th of them did; oldest first, only those at or after `since_ms` when
  /// given, of those the newest `limit` when given. Throws Error(kConnection) when fewer than
  /// a quorum answered.
  std::vector<history::Event> history(std::string_view name, std::optional<std::int64_t> since_ms,
                                      std::optional<std::int64_t> limit);

 private:
  struct Attempt;
  class Listeners;
  /// Waits for the next attempt of a waiting acquire: until a quorum of nodes announced a
  /// give-back, or the holder's lease runs out, at most `left`. False on a managed signal.
  bool wait_for_turn(Listeners& listeners, int attempt, Millis holder_left, Millis left) const;
  /// One round over all nodes; `last`: a busy answer ends the call (the nodes record it),
  /// else the caller waits, among each busy node's waiting writers. `busy_since` has each
  /// node's first busy answer of the call (lock::AcquireOptions::busy_since), kept up to date.
  Attempt try_once(std::string_view name, const std::string& token, Millis ttl,
                   const std::string& who, bool last, std::vector<std::int64_t>& busy_since);
  /// Gives `name` back on the nodes flagged in `nodes` (none flagged: no round trip).
  void release_where(std::string_view name, const std::string& token,
                     const std::vector<bool>& nodes);
  /// Once: asks each node its run_id; two nodes with one run_id are one server, whose vote
  /// would count twice: Error(kUsage). A node that does not answer is not checked.
  void check_servers();

  std::vector<Connection> conns_;
  Keys keys_;
  bool servers_checked_ = false;
};

}  // namespace rcoord::redlock
