#pragma once
/// A connection of its own in subscribed mode (RESP2: a subscribed connection can run no
/// other command), for the waits that are woken by PUBLISH: `signal wait`, `latch wait`,
/// `elect observe`. Messages published before subscribe() returns are not seen, so callers
/// subscribe first and read the state second, to never miss a transition.

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "url.hpp"

namespace rcoord {

struct Message {
  std::string channel;
  std::string data;
};

/// now + `wait`, saturating: nullopt, Millis::max() or anything the clock cannot represent
/// is time_point::max() (no limit).
std::chrono::steady_clock::time_point deadline_after(std::optional<Millis> wait);

class Subscriber {
 public:
  /// Does not connect yet; subscribe() does.
  Subscriber(Endpoint endpoint, Millis io_timeout);

  /// Subscribes to `channels` and returns once the server confirmed every one of them.
  void subscribe(const std::vector<std::string>& channels);

  /// A channel whose publisher runs on another cluster node than this subscriber's.
  struct Elsewhere {
    std::string channel;
    std::string route_key;
    Endpoint node;
  };
  /// As subscribe(), on the node that holds `route_keys[i]` (the key whose scripts publish
  /// to `channels[i]`). On Redis Cluster a PUBLISH counts only the subscribers of its own
  /// node, and rcoord's scripts use that count, so a subscriber must sit on the publisher's
  /// node. When every channel is served elsewhere, the subscriber moves there; channels
  /// split over several nodes are returned (not subscribed here), for other subscribers.
  /// On a standalone server: one round trip, as subscribe().
  std::vector<Elsewhere> subscribe_routed(std::vector<std::string> channels,
                                          std::vector<std::string> route_keys);

  /// The next message, waiting up to `block` (Millis::max(): no limit); nullopt when none
  /// came in time. A connection silent for half the I/O timeout gets a PING, whose answer
  /// must come within the I/O timeout: a server that froze or cannot be reached surfaces as
  /// Error(kConnection) within one and a half timeouts, instead of an endless wait. A managed
  /// signal interrupts the wait with Error(kInterrupted) (the connection is then closed).
  std::optional<Message> next(Millis block);

  /// The messages already received, or readable now without waiting (nothing stays
  /// buffered: a poll() on native_fd() then sees the next one). I/O failures throw
  /// Error(kConnection).
  std::vector<Message> drain();

  /// The socket, for await_readable(); -1 when not connected.
  int native_fd() const { return conn_.native_fd(); }

  /// Every message the server published to us before this call: a PING round trip, whose
  /// answer comes after all of them. Used after reading state on another connection, so
  /// that the messages sent before that read are handled before it.
  std::vector<Message> sync();

  /// Unsubscribes from everything and returns the messages that arrived before.
  std::vector<Message> unsubscribe();

 private:
  enum class Kind { kMessage, kSubscribe, kUnsubscribe, kPong };
  /// Classifies one reply; a message goes to the queue. Returns the kind and, for
  /// (un)subscribe confirmations, the count of subscriptions left in `count`.
  Kind take(Reply r, long long& count);
  /// The next reply within the I/O timeout, or Error(kConnection).
  Reply reply_in_time();
  void confirm(Reply first, std::size_t channels);
  /// Sends a PING without waiting for its answer (take() counts the PONGs).
  void send_ping();
  [[noreturn]] void no_answer();

  Connection conn_;
  std::deque<Message> queue_;
  std::chrono::steady_clock::time_point heard_at_;  ///< the last reply of any kind
  std::chrono::steady_clock::time_point ping_sent_at_;
  int pings_outstanding_ = 0;
};

/// Waits up to `block` (Millis::max(): no limit) until some of `subs` have something to
/// read, and says which (their indexes; none when `block` passed). Reads nothing: drain()
/// them then. Call it with nothing left buffered (after drain()). One poll() for all, where
/// Subscriber::next() listens to one. A managed signal interrupts the wait with
/// Error(kInterrupted).
std::vector<std::size_t> await_readable(const std::vector<Subscriber*>& subs, Millis block);

}  // namespace rcoord
