#pragma once
/// Learning at once that a held lease was broken (SPEC §6 "loss noticed at once"), rather than
/// at the next renewal, TTL/3 later.
///
/// Redis's client-side tracking in broadcast mode: the connection that renews the lease asks
/// to hear of every change to its object's keys made by another client (CLIENT TRACKING ON
/// BCAST PREFIX … NOLOOP: its own renewals say nothing), and the server sends each change, as
/// a message on `__redis__:invalidate`, to a second connection of ours on the same server. A
/// break, a DEL, an expiry, another holder's take or a FLUSHALL then reaches rcoord within
/// about one round trip; the supervisor checks the lease at once, by renewing it. A watch
/// never decides a loss itself: the renewal does, as on any other day.
///
/// Where tracking cannot start (a proxy without CLIENT TRACKING, an ACL user without the
/// command or the channel, a server that is slow to answer) or stops (its connection drops),
/// nothing fails: the lease is watched by its renewals alone.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"

namespace rcoord {

/// A lease's keys to watch, on the connection that renews it.
struct WatchedKeys {
  Connection* conn = nullptr;
  /// The keys whose change by another client may mean the lease is gone: the one holding the
  /// holder's token (and, for a lock, its readers); not the waiters' or the history's.
  std::vector<std::string> keys;
};

class LossWatch {
 public:
  /// Starts watching, waiting for nothing past `deadline`; nullptr when tracking cannot
  /// start here (see above). Never throws.
  static std::unique_ptr<LossWatch> start(const WatchedKeys& watched,
                                          std::chrono::steady_clock::time_point deadline);

  /// The socket the changes arrive on, for poll(); -1 once the watch has stopped.
  int fd() const { return messages_.native_fd(); }

  /// Reads what has arrived, without waiting. True when a watched key was changed by another
  /// client, or the whole database flushed. When the connection fails, the watch stops
  /// (fd() is -1) and this says true once: the lease is then best checked at once too.
  bool changed();

  LossWatch(const LossWatch&) = delete;
  LossWatch& operator=(const LossWatch&) = delete;

 private:
  LossWatch(Endpoint endpoint, Millis timeout, std::vector<std::string> keys);
  /// Whether one invalidation message names a watched key (or is a flush).
  bool concerns_us(const redisReply* message) const;

  Connection messages_;  ///< subscribed to __redis__:invalidate
  std::vector<std::string> keys_;
};

}  // namespace rcoord
