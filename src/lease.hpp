#pragma once
/// A lease as its primitive hands it over (a lock, a semaphore's permits, a leadership, a
/// queue message): its length, when it was taken, and how to renew it and give it back.
/// The supervisor (supervise.hpp) renews it while a command runs; run_holding (holding.hpp)
/// gives it back afterwards. Each primitive makes its own (lock::lease, semaphore::lease,
/// elect::lease, Redlock::lease, queue consume's message lease), so nothing above the
/// primitives needs to know how a lease is renewed.

#include <chrono>
#include <functional>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "history.hpp"
#include "loss_watch.hpp"

namespace rcoord {

/// What a give-back did: whether it gave anything back, and whether that woke someone
/// waiting to take it next.
struct GivenBack {
  bool released = false;  ///< the token held it, and gave it back
  bool woke = false;      ///< and the give-back woke a waiter that may now take it
};

struct Lease {
  using Clock = std::chrono::steady_clock;
  /// The lease length as the server counts it.
  Millis ttl{30'000};
  /// When the request that took it was sent: the lease is counted from there.
  Clock::time_point taken_at;
  /// Renews the lease without waiting past `deadline` (the stop point). true: still ours;
  /// false: lost (someone else holds it, or it is gone). May throw Error(kConnection):
  /// retried until the stop point.
  std::function<bool(Clock::time_point deadline)> renew;
  /// Gives it back: exact (by token), harmless when it is no longer ours, recording in the
  /// history how it ended (`ending`: the primitive adds who and the wait). Waits for no
  /// replica acknowledgement and for nothing past `deadline`. Returns true when the give-back
  /// woke someone waiting to take it next (false when none was, or the primitive cannot tell).
  /// Throws Error. Empty: it is settled another way (a queue message is acked or nacked).
  std::function<bool(const Ending& ending, Clock::time_point deadline)> give_back;
  /// Keeps it `rest` longer from now instead of giving it back (`lock run --min-hold`), as
  /// give_back waits; the history records the hold's end now (`ending`). Empty: it cannot be
  /// kept.
  std::function<void(const Ending& ending, Millis rest, Clock::time_point deadline)> keep;
  /// The keys whose change by another client may mean it is lost, each on the connection
  /// that renews it: the supervisor then checks it at once (loss_watch.hpp). Empty: its
  /// renewals alone find a loss.
  std::vector<WatchedKeys> watched{};
};

/// A lease on one connection: `renew`, `give_back` and `keep` are the primitive's calls on
/// `conn`, each bounded by its deadline there (and give_back and keep without waiting for
/// replicas: a give-back that a failover loses only leaves a lease to expire by its TTL).
/// `conn` must outlive the lease.
Lease connection_lease(Connection& conn, Millis ttl, Lease::Clock::time_point taken_at,
                       std::function<bool()> renew,
                       std::function<bool(const Ending& ending)> give_back,
                       std::function<void(const Ending& ending, Millis rest)> keep = {});

}  // namespace rcoord
