#pragma once
/// One connection to one Redis server: the socket (TCP or Unix), timeouts, AUTH/SELECT,
/// pipelining. hiredis is used for the RESP protocol only (formatting and parsing); the
/// socket is ours, so every wait is a poll() with a deadline and TLS can slot in below.

#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "duration.hpp"
#include "errors.hpp"
#include "url.hpp"

// OpenSSL's handle types, declared here so that this header does not pull in OpenSSL.
struct ssl_st;
struct ssl_ctx_st;

namespace rcoord {

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
/// An owned reply. Never null once returned by Connection.
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

/// One command: its arguments, binary-safe.
using Args = std::vector<std::string>;

/// Fewer replicas acknowledged a write within the timeout than --wait-replicas asked for.
/// Exit 3, like any other doubt about whether a write is safe.
class ReplicaShortfall : public Error {
 public:
  using Error::Error;
};

class Connection {
 public:
  /// Does not connect yet: the first command does, so usage errors never touch the network.
  Connection(Endpoint endpoint, Millis timeout);
  ~Connection();
  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Every command-level call below follows Redis Cluster redirects: on MOVED the
  /// connection moves to the node named (for good: the next commands go there too), on ASK
  /// the command is sent once to the node named, after ASKING, and TRYAGAIN is retried
  /// after a short pause; all bounded (see cluster.hpp), then Error(kServer).
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

  /// Sends all commands in one write, then reads as many replies (error replies included).
  /// Redirected as a whole only when every reply is the same redirect (nothing ran); a
  /// pipeline only partly redirected returns its MOVED/ASK error replies in place.
  std::vector<Reply> pipeline(const std::vector<Args>& commands);

  /// Streaming pipeline for bulk verbs: writes commands already in RESP form (see
  /// append_command) without reading their replies, so the caller can prepare the next
  /// batch while the server works on this one. receive() then reads the replies in order,
  /// one call per command sent; no other command may use the connection in between.
  /// Redirects are not followed here: on a cluster, send a first command on the same key
  /// through command() or pipeline() so that the connection is on the key's node.
  void send_formatted(std::string_view resp);
  /// The next reply of a send_formatted() stream (error replies included, not thrown).
  Reply receive();
  /// Waits up to `block` for a reply the server sends unasked (a pub/sub message on a
  /// subscribed connection); nullptr when none came in time. I/O failures throw
  /// Error(kConnection); a managed signal interrupts the wait with Error(kInterrupted).
  Reply receive(Millis block);

  /// Connects now (if not connected). Throws Error(kConnection).
  void ensure_connected();
  /// Drops the socket; the next command reconnects.
  void close();
  bool connected() const { return fd_ >= 0; }

  /// Whether the last command (or stream write) went out, in part or whole: when its reply
  /// then fails to come, the server may have run it. False when connecting failed first.
  bool request_sent() const { return request_sent_; }

  /// No connect, write or read waits past `deadline` (a renewal must not outlast the moment
  /// its command has to be stopped); time_point::max() lifts it. See DeadlineCap.
  void set_deadline(std::chrono::steady_clock::time_point deadline) { cap_ = deadline; }
  std::chrono::steady_clock::time_point deadline() const { return cap_; }

  /// With N > 0, await_replicas() asks for N replica acknowledgements (--wait-replicas).
  void set_wait_replicas(int n) { wait_replicas_ = n; }
  int wait_replicas() const { return wait_replicas_; }
  /// Waits (Redis WAIT, up to the I/O timeout) until the replicas asked for acknowledged
  /// every write this connection made. After a command served through an ASK redirect, the
  /// WAIT goes to the node that served it. Throws ReplicaShortfall when fewer did.
  void await_replicas();

  const Endpoint& endpoint() const { return endpoint_; }
  Millis timeout() const { return timeout_; }

 private:
  using Clock = std::chrono::steady_clock;

  /// The outcome of one non-blocking transfer on the socket or the TLS session.
  struct Io {
    std::ptrdiff_t bytes = 0;  ///< > 0 transferred; 0 the peer closed; < 0 see wait
    short wait = 0;            ///< with bytes < 0: POLLIN/POLLOUT to wait for; 0: failed
  };

  void connect_socket(Clock::time_point deadline);
  /// Asks the sentinels for the master's address and points the endpoint at it.
  void find_master(Clock::time_point deadline);
  void start_tls(Clock::time_point deadline);
  /// AUTH, SELECT and (through Sentinel) ROLE; false when the server is not a master.
  bool handshake(Clock::time_point deadline);
  void write_all(std::string_view data, Clock::time_point deadline);
  Reply read_reply(Clock::time_point deadline);
  /// Reads what the socket has into the reply parser; false when it would block.
  bool read_some();
  /// The next reply already parsed from what was read, or nullptr.
  Reply next_parsed();
  Io send_some(std::string_view data);
  Io recv_some(char* buf, std::size_t len);
  /// Io for a failed SSL_read/SSL_write.
  Io tls_outcome(int rc);
  /// Waits for `events` on the socket until `deadline`; false on timeout.
  bool wait_for(short events, Clock::time_point deadline);
  /// now + `wait`, or the deadline set by set_deadline() when that comes first.
  Clock::time_point within(Millis wait) const;
  /// "within 2s" (`preposition` and the timeout), or "by its deadline" when set_deadline()
  /// cut the wait that ended at `until` short.
  std::string waited(Clock::time_point until, std::string_view preposition) const;
  /// Closes the socket abortively (RST): a request still queued in our kernel is discarded,
  /// never delivered after we gave up on it.
  void abort();
  /// abort(), then throws Error(kConnection).
  [[noreturn]] void fail(const std::string& what, const std::string& hint);
  /// One write of `commands`, then their replies; a reply may take `extra` longer than the
  /// I/O timeout (blocking commands).
  std::vector<Reply> exchange(const std::vector<Args>& commands, Millis extra);
  /// exchange(), following cluster redirects.
  std::vector<Reply> routed(const std::vector<Args>& commands, Millis extra);

  Endpoint endpoint_;
  Millis timeout_;
  int fd_ = -1;
  redisReader* reader_ = nullptr;
  ssl_ctx_st* tls_ctx_ = nullptr;
  ssl_st* tls_ = nullptr;
  std::string io_error_;    ///< why the last transfer failed (errno or TLS text)
  short pending_wait_ = 0;  ///< what read_some() found it must wait for
  int wait_replicas_ = 0;
  bool request_sent_ = false;
  Clock::time_point cap_ = Clock::time_point::max();
  /// The node that served the last command through an ASK redirect (its write is there, so
  /// its WAIT must be too); reset by the next command.
  std::unique_ptr<Connection> asked_;
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

/// Appends one command in RESP form (`*N` then `$len` bulk strings) to `out`.
void append_command(std::string& out, const Args& args);

/// The Error for the error reply `msg` to `what` (a command or script): kConnection for a
/// missing or wrong password, kServer otherwise.
Error reply_error(const std::string& msg, std::string_view what);
/// Throws reply_error() if `r` is an error reply, naming `what` (a command or script).
void check_reply(const Reply& r, std::string_view what);
/// As check_reply() for a command on `key`, part of an rcoord object: WRONGTYPE becomes
/// foreign_key_error(), naming the object and the key.
void check_key_reply(const Reply& r, std::string_view what, std::string_view key);
/// Reply accessors that throw Error(kServer) when the shape is not the expected one.
std::int64_t reply_integer(const redisReply* r);
std::string reply_string(const redisReply* r);
bool reply_is_nil(const redisReply* r);

}  // namespace rcoord
