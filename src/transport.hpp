#pragma once
/// The bytes of one connection: a socket (TCP or Unix), TLS over it when the endpoint asks
/// for it, and every wait a poll() with a deadline. Requests go out as RESP bytes, replies
/// come back parsed (reply.hpp); what they mean is the caller's business.

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "duration.hpp"
#include "reply.hpp"
#include "url.hpp"

// OpenSSL's handle types, declared here so that this header does not pull in OpenSSL.
struct ssl_st;
struct ssl_ctx_st;

namespace rcoord {

/// When a wait must end, and how a message says that it ran out.
struct Deadline {
  std::chrono::steady_clock::time_point at;
  Millis timeout{0};    ///< the connection's I/O timeout, which messages name
  bool capped = false;  ///< `at` is a deadline set on the connection, before the timeout
  /// "after 2s" (`preposition` and the timeout), or "by its deadline" when capped.
  std::string missed(std::string_view preposition) const;
};

/// One socket, open or closed. Any failure closes it abortively (RST: a request still queued
/// in our kernel is discarded, never delivered after we gave up on it), then throws
/// Error(kConnection), or Error(kInterrupted) when a managed signal cut a wait short.
class Transport {
 public:
  /// Closed.
  Transport() = default;

  /// Connects to `endpoint` (its socket path, else its host and port), then starts TLS when
  /// the endpoint asks for it. Throws Error(kUsage) for a TLS file that cannot be used.
  void connect(const Endpoint& endpoint, const Deadline& deadline);
  bool is_open() const { return fd_.get() >= 0; }
  /// The socket, for a poll() over several connections; -1 when closed.
  int native_fd() const { return fd_.get(); }
  /// Closes the socket gracefully.
  void close();
  /// Closes the socket abortively (RST), see above.
  void abort();
  /// abort(), then throws Error(kConnection).
  [[noreturn]] void fail(const std::string& what, const std::string& hint);

  /// Writes all of `data`.
  void write_all(std::string_view data, const Deadline& deadline);
  /// The next reply.
  Reply read_reply(const Deadline& deadline);
  /// The next reply, or nullptr when none came by `deadline` (the socket stays open).
  Reply poll_reply(const Deadline& deadline);

 private:
  /// The outcome of one non-blocking transfer on the socket or the TLS session.
  struct Io {
    std::ptrdiff_t bytes = 0;  ///< > 0 transferred; 0 the peer closed; < 0 see wait
    short wait = 0;            ///< with bytes < 0: POLLIN/POLLOUT to wait for; 0: failed
  };
  /// An owned file descriptor, closed when destroyed.
  class OwnedFd {
   public:
    OwnedFd() = default;
    explicit OwnedFd(int fd) : fd_(fd) {}
    OwnedFd(OwnedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    OwnedFd& operator=(OwnedFd&& other) noexcept {
      std::swap(fd_, other.fd_);  // `other` closes what this held
      return *this;
    }
    OwnedFd(const OwnedFd&) = delete;
    OwnedFd& operator=(const OwnedFd&) = delete;
    ~OwnedFd();
    int get() const { return fd_; }

   private:
    int fd_ = -1;
  };
  struct TlsContextFree {
    void operator()(ssl_ctx_st* ctx) const;
  };
  struct TlsSessionFree {
    void operator()(ssl_st* tls) const;
  };
  void connect_socket(const Endpoint& endpoint, const Deadline& deadline);
  /// A TCP connection to `address`, with more attempts beside the first when it goes
  /// unanswered (a lost SYN); fails (throws) by `deadline`.
  OwnedFd connect_tcp(const sockaddr_storage& address, socklen_t length, const Deadline& deadline);
  /// The TLS handshake on the connected socket, whose TCP connect took `connect_took`.
  void start_tls(const Endpoint& endpoint, const Deadline& deadline,
                 std::chrono::steady_clock::duration connect_took);
  /// Whether the address of this socket answers a plain PING on a new connection (a RESP
  /// reply) by `deadline`, before this socket is ready for `handshake_wait`: a plain port
  /// where TLS was asked for.
  bool answers_plain_redis(const Deadline& deadline, short handshake_wait);
  /// Reads what the socket has into the parser; false when it would block.
  bool read_some();
  /// The next reply already parsed from what was read, or nullptr.
  Reply next_parsed();
  /// Fails with the server's words when `r` is an error after which the server closes the
  /// connection: a protected-mode refusal (DENIED), a command of a client that has not
  /// authenticated refused as a protocol error (reply_error()).
  void check_closing(const Reply& r);
  Io send_some(std::string_view data);
  Io recv_some(char* buf, std::size_t len);
  /// Io for a failed SSL_read/SSL_write.
  Io tls_outcome(int rc);
  /// Polls `fds` until one is ready or `until` passes, a signal rcoord manages ending it
  /// early: how many are ready (0: the time is up), or -1 for that signal
  /// (signals::pending()). Throws Error(kConnection) when poll itself fails.
  int poll_until(pollfd* fds, std::size_t count, std::chrono::steady_clock::time_point until);
  /// Waits for `events` on the socket until `deadline`; false on timeout.
  bool wait_for(short events, const Deadline& deadline);

  // Destroyed in reverse order: the TLS session, its context, then the socket under them.
  OwnedFd fd_;
  std::unique_ptr<ssl_ctx_st, TlsContextFree> tls_ctx_;
  std::unique_ptr<ssl_st, TlsSessionFree> tls_;
  std::unique_ptr<ReplyParser> parser_;  ///< made anew for each connection
  std::string peer_;                     ///< the endpoint, for messages
  std::string io_error_;                 ///< why the last transfer failed (errno or TLS text)
  short pending_wait_ = 0;               ///< what read_some() found it must wait for
};

}  // namespace rcoord
