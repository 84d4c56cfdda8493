#pragma once
/// A session with one Redis server: connecting on first use (through Sentinel: to the
/// master the sentinels name), AUTH/SELECT, then commands as one write and their replies.
/// It follows no cluster redirect: that is the Connection's job (connection.hpp).

#include <chrono>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "duration.hpp"
#include "reply.hpp"
#include "transport.hpp"
#include "url.hpp"

namespace rcoord {

class Session {
 public:
  using Clock = std::chrono::steady_clock;

  /// Does not connect yet: the first command does, so usage errors never touch the network.
  Session(Endpoint endpoint, Millis timeout);

  /// Connects now (if not connected). Throws Error(kConnection).
  void ensure_connected();
  /// Drops the socket; the next command reconnects.
  void close() { transport_.close(); }
  bool connected() const { return transport_.is_open(); }
  /// The socket (see Transport::native_fd).
  int native_fd() const { return transport_.native_fd(); }
  /// Drops the socket and points the session at another server (a cluster's MOVED).
  void move_to(Endpoint endpoint);

  /// Sends all commands in one write, then reads as many replies (error replies included);
  /// a reply may take `extra` longer than the I/O timeout (blocking commands). An
  /// authentication error reply throws Error(kConnection). I/O failures throw
  /// Error(kConnection) and close the socket; the next command reconnects.
  std::vector<Reply> exchange(const std::vector<Args>& commands, Millis extra);
  /// Writes commands already in RESP form without reading their replies (see
  /// Connection::send_formatted).
  void send_formatted(std::string_view resp);
  /// The next reply of a send_formatted() stream (error replies included, not thrown).
  Reply receive();
  /// Waits up to `block` for a reply the server sends unasked; nullptr when none came.
  Reply receive(Millis block);

  /// Whether the last request went out, in part or whole (see Connection::request_sent).
  bool request_sent() const { return request_sent_; }
  /// No connect, write or read waits past `deadline`; time_point::max() lifts it.
  void set_deadline(Clock::time_point deadline) { cap_ = deadline; }
  Clock::time_point deadline() const { return cap_; }
  /// now + `wait`, or the deadline set by set_deadline() when that comes first.
  Deadline within(Millis wait) const;

  /// One write of `request` (RESP), then the one reply, each within the I/O timeout; the
  /// reply may take `extra` longer.
  Reply round_trip(std::string_view request, Millis extra);

  const Endpoint& endpoint() const { return endpoint_; }
  Millis timeout() const { return timeout_; }

  /// ROLE goes out in front of the next request, in the same write (no round trip of its
  /// own): take_replica_count() then gives the replicas connected when it was made.
  void want_replica_count() { role_pending_ = true; }
  /// The replicas online at the master (ROLE) as the last request with want_replica_count()
  /// learnt them, once; nullopt when none has since. A replica counts none; a user who may not
  /// run ROLE counts none too (-1 is never returned).
  std::optional<int> take_replica_count() { return std::exchange(replicas_, std::nullopt); }
  /// ROLE now, in a round trip of its own: the replicas online at the master.
  int count_replicas();

 private:
  /// Asks the sentinels for the master's address and points the endpoint at it.
  void find_master(const Deadline& deadline);
  /// AUTH, SELECT and (through Sentinel) ROLE; false when the server is not a master.
  bool handshake(const Deadline& deadline);
  /// The start of the next write: CLIENT SETNAME when the connection has not named itself
  /// yet (its reply is then owed, and read by skip_name_reply() before any other).
  /// Then ROLE, when want_replica_count() asked for it.
  std::string name_prefix();
  /// Reads and drops the reply of CLIENT SETNAME when one is owed. An error reply (a user
  /// whose ACL has no CLIENT SETNAME) is dropped too: the name is for operators, never a
  /// reason to fail the command. Then reads ROLE's when one is owed, into replicas_.
  void skip_name_reply(const Deadline& deadline);

  Endpoint endpoint_;
  Millis timeout_;
  Transport transport_;
  bool request_sent_ = false;
  bool name_pending_ = false;     // CLIENT SETNAME goes out with the next write
  bool name_reply_owed_ = false;  // its reply comes before the next command's
  bool role_pending_ = false;     // ROLE goes out with the next write
  bool role_reply_owed_ = false;  // its reply comes next (after the name's)
  std::optional<int> replicas_;   // what the last ROLE said
  Clock::time_point cap_ = Clock::time_point::max();
};

}  // namespace rcoord
