#pragma once
/// The connection every primitive talks through: one logical Redis (standalone, through
/// Sentinel, or a cluster), commands and pipelines that follow cluster redirects, and WAIT
/// for --wait-replicas. The layers under it: session.hpp (one server: connect, AUTH/SELECT,
/// Sentinel), transport.hpp (the socket, TLS, poll), reply.hpp (RESP and the replies), and
/// redirect.hpp (MOVED/ASK/TRYAGAIN, WAIT).

#include <algorithm>
#include <chrono>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "duration.hpp"
#include "errors.hpp"
#include "redirect.hpp"
#include "reply.hpp"
#include "session.hpp"
#include "settings.hpp"
#include "url.hpp"

namespace rcoord {

class Connection {
 public:
  /// Does not connect yet: the first command does, so usage errors never touch the network.
  Connection(Endpoint endpoint, Millis timeout) : session_(std::move(endpoint), timeout) {}

  /// Every command-level call below follows Redis Cluster redirects: on MOVED the
  /// connection moves to the node named (for good: the next commands go there too), on ASK
  /// the command is sent once to the node named, after ASKING, and TRYAGAIN is retried
  /// after a short pause; all bounded (see redirect.hpp), then Error(kServer).
  ///
  /// Sends one command, returns its reply. An error reply throws Error(kServer)
  /// (or kConnection for authentication errors). I/O failures throw Error(kConnection)
  /// and close the socket; the next command reconnects.
  Reply command(const Args& args);

  /// As command(), but returns error replies instead of throwing (NOSCRIPT handling).
  Reply command_raw(const Args& args);

  /// A blocking command (BLPOP...) whose reply may legitimately take `block` longer than
  /// the I/O timeout. A managed signal interrupts it with Error(kInterrupted).
  Reply command_blocking(const Args& args, Millis block);

  /// As pipeline(), for commands of which one blocks (BLPOP...): the replies may take
  /// `extra` longer than the I/O timeout (less when negative). A managed signal interrupts
  /// the wait with Error(kInterrupted).
  std::vector<Reply> pipeline_blocking(const std::vector<Args>& commands, Millis extra) {
    return routed(commands, extra);
  }

  /// Sends all commands in one write, then reads as many replies (error replies included).
  /// Redirected as a whole only when every reply is the same redirect (nothing ran); a
  /// pipeline only partly redirected returns its MOVED/ASK error replies in place.
  std::vector<Reply> pipeline(const std::vector<Args>& commands);

  /// pipeline(), then each reply that is a MOVED/ASK redirect is asked again alone,
  /// following its redirect: for commands on several objects, whose keys a cluster may keep
  /// on other nodes than the one this connection is on. Only for commands that may run
  /// twice (reads, idempotent writes): the others in the pipeline ran where they were.
  std::vector<Reply> pipeline_each(const std::vector<Args>& commands);

  /// Streaming pipeline for bulk verbs: writes commands already in RESP form (see
  /// append_command) without reading their replies, so the caller can prepare the next
  /// batch while the server works on this one. receive() then reads the replies in order,
  /// one call per command sent; no other command may use the connection in between.
  /// Redirects are not followed here: on a cluster, send a first command on the same key
  /// through command() or pipeline() so that the connection is on the key's node.
  void send_formatted(std::string_view resp);
  /// The next reply of a send_formatted() stream (error replies included, not thrown).
  Reply receive() { return session_.receive(); }
  /// Waits up to `block` for a reply the server sends unasked (a pub/sub message on a
  /// subscribed connection); nullptr when none came in time. I/O failures throw
  /// Error(kConnection); a managed signal interrupts the wait with Error(kInterrupted).
  Reply receive(Millis block) { return session_.receive(block); }

  /// Connects now (if not connected). Throws Error(kConnection).
  void ensure_connected() { session_.ensure_connected(); }
  /// Drops the socket; the next command reconnects.
  void close() { session_.close(); }
  bool connected() const { return session_.connected(); }
  /// The socket, for a poll() over several subscribed connections; -1 when closed.
  int native_fd() const { return session_.native_fd(); }

  /// Whether the last command (or stream write) went out, in part or whole: when its reply
  /// then fails to come, the server may have run it. False when connecting failed first.
  bool request_sent() const { return session_.request_sent(); }

  /// No connect, write or read waits past `deadline` (a renewal must not outlast the moment
  /// its command has to be stopped); time_point::max() lifts it. See DeadlineCap.
  void set_deadline(std::chrono::steady_clock::time_point deadline) {
    session_.set_deadline(deadline);
  }
  std::chrono::steady_clock::time_point deadline() const { return session_.deadline(); }

  /// With N > 0, await_replicas() asks for N replica acknowledgements (--wait-replicas);
  /// with kWaitReplicasAuto, for every replica connected when the write was made.
  void set_wait_replicas(int n) { wait_replicas_ = n; }
  int wait_replicas() const { return wait_replicas_; }
  /// The next request is a write that await_replicas() follows: with kWaitReplicasAuto, ROLE
  /// goes out in front of it in the same write, so that learning how many replicas to wait
  /// for costs no round trip (and with none, nothing at all: no WAIT is sent).
  void count_replicas_with_next_request() {
    if (wait_replicas_ == kWaitReplicasAuto) session_.want_replica_count();
  }
  /// Waits (Redis WAIT, up to the I/O timeout) until the replicas asked for acknowledged
  /// every write this connection made. After a command served through an ASK redirect, the
  /// WAIT goes to the node that served it. Throws ReplicaShortfall when fewer did. With
  /// kWaitReplicasAuto and no count learnt with the request, ROLE is asked first.
  void await_replicas();

  const Endpoint& endpoint() const { return session_.endpoint(); }
  Millis timeout() const { return session_.timeout(); }

 private:
  /// The commands through cluster redirects; a reply may take `extra` longer than the I/O
  /// timeout (blocking commands).
  std::vector<Reply> routed(const std::vector<Args>& commands, Millis extra);

  Session session_;
  /// The node that served the last command through an ASK redirect (its write is there, so
  /// its WAIT must be too); reset by the next command.
  std::optional<Session> asked_;
  int wait_replicas_ = 0;
};

/// While alive, `conn` does not wait for replica acknowledgements. For giving back what a
/// verb took: a release that a failover loses only leaves a lease to expire by its TTL.
class ReplicaWaitSuspended {
 public:
  explicit ReplicaWaitSuspended(Connection& conn) : conn_(conn), saved_(conn.wait_replicas()) {
    conn_.set_wait_replicas(0);
  }
  ~ReplicaWaitSuspended() { conn_.set_wait_replicas(saved_); }
  ReplicaWaitSuspended(const ReplicaWaitSuspended&) = delete;
  ReplicaWaitSuspended& operator=(const ReplicaWaitSuspended&) = delete;

 private:
  Connection& conn_;
  int saved_;
};

/// While alive, `conn` waits for nothing past `deadline` (or an earlier deadline already set).
class DeadlineCap {
 public:
  DeadlineCap(Connection& conn, std::chrono::steady_clock::time_point deadline)
      : conn_(conn), saved_(conn.deadline()) {
    conn_.set_deadline(std::min(saved_, deadline));
  }
  ~DeadlineCap() { conn_.set_deadline(saved_); }
  DeadlineCap(const DeadlineCap&) = delete;
  DeadlineCap& operator=(const DeadlineCap&) = delete;

 private:
  Connection& conn_;
  std::chrono::steady_clock::time_point saved_;
};

}  // namespace rcoord
