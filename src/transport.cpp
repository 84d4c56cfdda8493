#include "transport.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "errors.hpp"
#include "signals.hpp"

namespace rcoord {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kConnectHint = "set --url or RCOORD_URL";

// OpenSSL's queued errors, most recent last, as one line; clears the queue.
std::string tls_error_text() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    const char* reason = ERR_reason_error_string(code);
    text = reason != nullptr ? reason : buf;
  }
  return text;
}

bool is_ip_literal(const std::string& host) {
  in6_addr addr{};
  return inet_pton(AF_INET, host.c_str(), &addr) == 1 ||
         inet_pton(AF_INET6, host.c_str(), &addr) == 1;
}

// OpenSSL writes with write(2), which raises SIGPIPE on a closed peer. Ignoring SIGPIPE for
// the whole process would leak into the children `run` starts, so it is blocked only
// around the write, and a SIGPIPE that write raised is taken back before unblocking.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~SigpipeBlocked() {
    if (!was_pending_) {
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      timespec zero{0, 0};
      while (sigtimedwait(&pipe, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t old_{};
  bool was_pending_ = false;
};

// What to do about a certificate the verification refused.
const char* verify_hint(long result) {
  if (result == X509_V_ERR_HOSTNAME_MISMATCH || result == X509_V_ERR_IP_ADDRESS_MISMATCH) {
    return "connect by a name the certificate holds, or give that name with --sni";
  }
  return "give the CA that signed the server's certificate with --tls-ca (or --tls-insecure "
         "to skip verification)";
}

}  // namespace

std::string Deadline::missed(std::string_view preposition) const {
  if (capped) return "by its deadline";
  return fmt::format("{} {}", preposition, format_duration(timeout));
}

Transport::OwnedFd::~OwnedFd() {
  if (fd_ >= 0) ::close(fd_);
}

void Transport::TlsContextFree::operator()(ssl_ctx_st* ctx) const { SSL_CTX_free(ctx); }

void Transport::TlsSessionFree::operator()(ssl_st* tls) const { SSL_free(tls); }

void Transport::close() {
  // Moved out, the resources die with `closing`, the TLS session before the socket under it;
  // what stays here is the moved-from state: closed.
  Transport closing(std::move(*this));
}

void Transport::abort() {
  if (is_open()) {
    // RST instead of FIN: what our kernel still holds of a request we gave up on is dropped,
    // so it cannot reach the server later (after a partition heals) and take something there.
    linger rst{1, 0};
    setsockopt(fd_.get(), SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
  }
  close();
}

void Transport::fail(const std::string& what, const std::string& hint) {
  abort();
  throw Error(kConnection, what, hint);
}

void Transport::connect(const Endpoint& endpoint, const Deadline& deadline) {
  close();
  peer_ = endpoint.describe();
  auto started = Clock::now();
  connect_socket(endpoint, deadline);
  if (endpoint.tls) start_tls(endpoint, deadline, Clock::now() - started);
  try {
    parser_ = std::make_unique<ReplyParser>();
  } catch (const Error& e) {
    fail(e.what(), "");
  }
}

int Transport::poll_until(pollfd* fds, std::size_t count, Clock::time_point until) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(until - Clock::now());
    if (left.count() <= 0) return 0;
    timespec ts{static_cast<time_t>(left.count() / 1'000'000'000),
                static_cast<long>(left.count() % 1'000'000'000)};
    int n = ppoll(fds, count, &ts, signals::wait_mask());
    if (n >= 0) return n;
    if (errno != EINTR)
      fail(fmt::format("poll failed on {}: {}", peer_, std::strerror(errno)), kConnectHint);
    if (signals::wait_mask() != nullptr && signals::pending() != 0) return -1;
  }
}

bool Transport::wait_for(short events, const Deadline& deadline) {
  pollfd p{fd_.get(), events, 0};
  int n = poll_until(&p, 1, deadline.at);
  if (n >= 0) return n > 0;
  abort();  // a reply may be in flight; this socket cannot be reused
  throw Error(kInterrupted, fmt::format("interrupted by signal {}", signals::pending()));
}

void Transport::connect_socket(const Endpoint& endpoint, const Deadline& deadline) {
  if (!endpoint.socket_path.empty()) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (endpoint.socket_path.size() >= sizeof(addr.sun_path)) {
      throw Error(kUsage, fmt::format("unix socket path too long: {}", endpoint.socket_path),
                  "use a path shorter than 108 bytes");
    }
    std::memcpy(addr.sun_path, endpoint.socket_path.c_str(), endpoint.socket_path.size() + 1);
    fd_ = OwnedFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!is_open()) fail("cannot create a socket", std::strerror(errno));
    if (::connect(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 &&
        errno != EINPROGRESS && errno != EAGAIN) {
      fail(fmt::format("cannot connect to {}: {}", peer_, std::strerror(errno)), kConnectHint);
    }
    return;
  }

  // Numeric addresses skip the resolver entirely (no NSS modules loaded: cheaper start-up).
  sockaddr_storage storage{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  auto port = htons(static_cast<std::uint16_t>(endpoint.port));
  if (inet_pton(AF_INET, endpoint.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = port;
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, endpoint.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = port;
    len = sizeof(sockaddr_in6);
  } else {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = getaddrinfo(endpoint.host.c_str(), nullptr, &hints, &found);
    if (rc != 0 || found == nullptr) {
      fail(fmt::format("cannot resolve host '{}': {}", endpoint.host, gai_strerror(rc)),
           kConnectHint);
    }
    std::memcpy(&storage, found->ai_addr, found->ai_addrlen);
    len = found->ai_addrlen;
    freeaddrinfo(found);
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = port;  // same offset in sockaddr_in6
  }

  fd_ = connect_tcp(storage, len, deadline);
  int one = 1;
  setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// A lost SYN (or SYN-ACK) is sent again by the kernel only after a second, then three more: on
// a lossy path one connection in a few hundred would take longer than a 2s --timeout, and a
// take then fails with nothing wrong but a packet. So a connect that has no answer after
// kFirstRetry starts another attempt beside it (a new socket, a new SYN at once), then again
// at doubling intervals, up to kMaxAttempts; the first attempt to connect wins, the others are
// closed. On a healthy path the first answers in a round trip and nothing else is sent.
Transport::OwnedFd Transport::connect_tcp(const sockaddr_storage& address, socklen_t length,
                                          const Deadline& deadline) {
  constexpr Millis kFirstRetry{250};
  constexpr std::size_t kMaxAttempts = 4;
  std::vector<OwnedFd> attempts;
  std::string last_error;
  auto start_attempt = [&] {
    OwnedFd fd(::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (fd.get() < 0) fail("cannot create a socket", std::strerror(errno));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0 &&
        errno != EINPROGRESS) {
      last_error = std::strerror(errno);
      return false;  // refused at once (nothing listens, no route): no use trying again
    }
    attempts.push_back(std::move(fd));
    return true;
  };
  if (!start_attempt()) {
    fail(fmt::format("cannot connect to {}: {}", peer_, last_error), kConnectHint);
  }
  Millis step = kFirstRetry;
  auto next_attempt = Clock::now() + step;
  while (Clock::now() < deadline.at) {
    auto until = attempts.size() < kMaxAttempts ? std::min(deadline.at, next_attempt) : deadline.at;
    std::vector<pollfd> polled;
    polled.reserve(attempts.size());
    for (const auto& fd : attempts) polled.push_back({fd.get(), POLLOUT, 0});
    int n = poll_until(polled.data(), polled.size(), until);
    if (n < 0)
      throw Error(kInterrupted, fmt::format("interrupted by signal {}", signals::pending()));
    for (std::size_t i = 0; n > 0 && i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      int err = 0;
      socklen_t err_len = sizeof(err);
      getsockopt(polled[i].fd, SOL_SOCKET, SO_ERROR, &err, &err_len);
      if (err == 0) return std::move(attempts[i]);
      // Refused or unreachable: an answer, and the same for any other attempt.
      fail(fmt::format("cannot connect to {}: {}", peer_, std::strerror(err)), kConnectHint);
    }
    if (n == 0 && Clock::now() >= next_attempt && attempts.size() < kMaxAttempts) {
      if (!start_attempt()) {
        fail(fmt::format("cannot connect to {}: {}", peer_, last_error), kConnectHint);
      }
      step *= 2;
      next_attempt = Clock::now() + step;
    }
  }
  fail(fmt::format("cannot connect to {}: timed out {}", peer_, deadline.missed("after")),
       "check the address, or raise --timeout");
}

void Transport::start_tls(const Endpoint& endpoint, const Deadline& deadline,
                          Clock::duration connect_took) {
  const TlsSettings& t = endpoint.tls_settings;
  tls_ctx_.reset(SSL_CTX_new(TLS_client_method()));
  if (!tls_ctx_) fail("cannot set up TLS", tls_error_text());
  SSL_CTX* ctx = tls_ctx_.get();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  auto bad_file = [&](const char* what, const std::string& file) {
    std::string why = tls_error_text();
    close();
    throw Error(kUsage, fmt::format("cannot use {} '{}': {}", what, file, why),
                "give a readable PEM file");
  };
  if (!t.insecure) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    if (!t.ca_file.empty()) {
      if (SSL_CTX_load_verify_locations(ctx, t.ca_file.c_str(), nullptr) != 1) {
        bad_file("the CA file", t.ca_file);
      }
    } else {
      SSL_CTX_set_default_verify_paths(ctx);
    }
  }
  if (!t.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, t.cert_file.c_str()) != 1) {
      bad_file("the client certificate", t.cert_file);
    }
    const std::string& key = t.key_file.empty() ? t.cert_file : t.key_file;
    if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
      bad_file("the client key", key);
    }
  }
  tls_.reset(SSL_new(ctx));
  SSL* tls = tls_.get();
  if (tls == nullptr || SSL_set_fd(tls, fd_.get()) != 1) {
    fail("cannot set up TLS", tls_error_text());
  }
  const std::string& name = t.sni.empty() ? endpoint.host : t.sni;
  if (!is_ip_literal(name)) {
    // SSL_set_tlsext_host_name, spelled out: the macro's C cast trips -Wold-style-cast.
    SSL_ctrl(tls, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(name.c_str()));
  }
  if (!t.insecure) {
    if (is_ip_literal(name)) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls), name.c_str());
    } else {
      SSL_set1_host(tls, name.c_str());
    }
  }
  // When to ask whether the port speaks plain Redis (answers_plain_redis): a TLS server
  // answers the ClientHello in one round trip, which the TCP connect took too.
  auto probe_at =
      Clock::now() + std::clamp<Clock::duration>(4 * connect_took, Millis(100), Millis(1000));
  bool probed = false;
  for (;;) {
    ERR_clear_error();
    int rc = SSL_connect(tls);
    if (rc == 1) return;
    int err = SSL_get_error(tls, rc);
    short wait = 0;
    if (err == SSL_ERROR_WANT_READ) wait = POLLIN;
    if (err == SSL_ERROR_WANT_WRITE) wait = POLLOUT;
    if (wait == 0) {
      long verified = SSL_get_verify_result(tls);
      if (verified != X509_V_OK) {
        fail(fmt::format("TLS certificate of {} was refused: {}", peer_,
                         X509_verify_cert_error_string(verified)),
             verify_hint(verified));
      }
      std::string why = tls_error_text();
      fail(fmt::format("TLS handshake with {} failed: {}", peer_,
                       why.empty() ? "the server closed the connection" : why),
           "check that this port speaks TLS, and --tls-cert/--tls-key if the server "
           "requires a client certificate");
    }
    // Until the probe, the wait ends at probe_at; after it, at the deadline.
    Deadline until =
        probed ? deadline
               : Deadline{std::min(deadline.at, probe_at), deadline.timeout, deadline.capped};
    if (wait_for(wait, until)) continue;
    if (!probed && Clock::now() < deadline.at) {
      probed = true;
      if (answers_plain_redis(deadline, wait)) {
        fail(fmt::format("the server at {} did not answer TLS: it speaks plain Redis on this "
                         "port",
                         peer_),
             "drop TLS: use redis:// instead of rediss://, without --tls; or use the "
             "server's TLS port");
      }
      continue;
    }
    fail(fmt::format("TLS handshake with {} timed out {}", peer_, deadline.missed("after")),
         "check that this port speaks TLS, or raise --timeout");
  }
}

// A plain Redis port reads a TLS ClientHello as the start of an inline command and waits for
// its end without a word, so a handshake with it would last the whole --timeout. Once the
// handshake has stalled for a few connect times, a second connection asks the same address a
// plain PING: a RESP answer ('+PONG', '-NOAUTH', '-DENIED') means the port is not TLS. A TLS
// server only drops that connection (a bad record), and the handshake goes on; so it does as
// soon as the handshake's own socket is ready (`handshake_wait`), whatever the probe got.
bool Transport::answers_plain_redis(const Deadline& deadline, short handshake_wait) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getpeername(fd_.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) return false;
  OwnedFd probe(::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (probe.get() < 0) return false;
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0 &&
      errno != EINPROGRESS) {
    return false;
  }
  // Whether the probe is ready for `events` before the handshake's socket is, by `deadline`.
  auto probe_first = [&](short events) {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.at - Clock::now());
      if (left.count() <= 0) return false;
      timespec ts{static_cast<time_t>(left.count() / 1'000'000'000),
                  static_cast<long>(left.count() % 1'000'000'000)};
      pollfd polled[2] = {{probe.get(), events, 0}, {fd_.get(), handshake_wait, 0}};
      int n = ppoll(polled, 2, &ts, signals::wait_mask());
      if (n > 0) return polled[1].revents == 0;
      if (n == 0 || errno != EINTR) return false;
      if (signals::wait_mask() != nullptr && signals::pending() != 0) {
        abort();
        throw Error(kInterrupted, fmt::format("interrupted by signal {}", signals::pending()));
      }
    }
  };
  if (!probe_first(POLLOUT)) return false;
  constexpr std::string_view kPing = "PING\r\n";
  if (::send(probe.get(), kPing.data(), kPing.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(kPing.size())) {
    return false;
  }
  if (!probe_first(POLLIN)) return false;
  char first = 0;
  return ::recv(probe.get(), &first, 1, 0) == 1 && (first == '+' || first == '-');
}

Transport::Io Transport::send_some(std::string_view data) {
  if (tls_) {
    SigpipeBlocked no_sigpipe;
    ERR_clear_error();
    std::size_t written = 0;
    if (SSL_write_ex(tls_.get(), data.data(), data.size(), &written) == 1) {
      return {static_cast<std::ptrdiff_t>(written), 0};
    }
    return tls_outcome(-1);
  }
  for (;;) {
    ssize_t n = ::send(fd_.get(), data.data(), data.size(), MSG_NOSIGNAL);
    if (n >= 0) return {n, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {-1, POLLOUT};
    io_error_ = std::strerror(errno);
    return {-1, 0};
  }
}

Transport::Io Transport::recv_some(char* buf, std::size_t len) {
  if (tls_) {
    ERR_clear_error();
    std::size_t got = 0;
    if (SSL_read_ex(tls_.get(), buf, len, &got) == 1) {
      return {static_cast<std::ptrdiff_t>(got), 0};
    }
    return tls_outcome(-1);
  }
  for (;;) {
    ssize_t n = ::recv(fd_.get(), buf, len, 0);
    if (n >= 0) return {n, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {-1, POLLIN};
    io_error_ = std::strerror(errno);
    return {-1, 0};
  }
}

Transport::Io Transport::tls_outcome(int rc) {
  switch (SSL_get_error(tls_.get(), rc)) {
    case SSL_ERROR_WANT_READ:
      return {-1, POLLIN};
    case SSL_ERROR_WANT_WRITE:
      return {-1, POLLOUT};
    case SSL_ERROR_ZERO_RETURN:
      return {0, 0};
    case SSL_ERROR_SYSCALL:
      io_error_ = errno != 0 ? std::strerror(errno) : "the server closed the connection";
      if (errno == 0) return {0, 0};
      return {-1, 0};
    default: {
      std::string why = tls_error_text();
      io_error_ = why.empty() ? "TLS error" : "TLS error: " + why;
      return {-1, 0};
    }
  }
}

void Transport::write_all(std::string_view data, const Deadline& deadline) {
  while (!data.empty()) {
    Io io = send_some(data);
    if (io.bytes > 0) {
      data.remove_prefix(static_cast<std::size_t>(io.bytes));
      continue;
    }
    if (io.wait != 0) {
      if (!wait_for(io.wait, deadline)) {
        fail(fmt::format("timed out writing to {} {}", peer_, deadline.missed("after")),
             "the server may be paused or overloaded; raise --timeout");
      }
      continue;
    }
    fail(fmt::format("cannot write to {}: {}", peer_,
                     io.bytes == 0 ? "the server closed the connection" : io_error_),
         "check that the server is up");
  }
}

bool Transport::read_some() {
  char buf[16384];
  Io io = recv_some(buf, sizeof(buf));
  if (io.bytes > 0) {
    parser_->feed({buf, static_cast<std::size_t>(io.bytes)});
    return true;
  }
  if (io.bytes == 0) {
    fail(fmt::format("connection to {} closed by the server", peer_),
         "check the server log; it may have restarted or hit its client limits");
  }
  if (io.wait == 0) {
    fail(fmt::format("cannot read from {}: {}", peer_, io_error_), "check that the server is up");
  }
  pending_wait_ = io.wait;
  return false;
}

Reply Transport::next_parsed() {
  Reply r;
  if (!parser_->next(r)) {
    fail(fmt::format("protocol error from {}: {}", peer_, parser_->error()),
         "is this a Redis server? check --url");
  }
  return r;
}

void Transport::check_closing(const Reply& r) {
  if (r->type != REDIS_REPLY_ERROR) return;
  std::string text(r->str, r->len);
  if (text.starts_with("ERR Protocol error: unauthenticated")) {
    // The server closes the connection after it: the replies still owed would only say
    // "closed by the server".
    abort();
    throw reply_error(text, "command");
  }
  if (!is_denied_reply(r.get())) return;
  // Sent as the connection opens, before any command is read, then the server closes: it
  // would otherwise be taken for the reply to CLIENT SETNAME, or lost to the close. Its
  // words say how to mend it.
  fail(fmt::format("the server at {} {}{}", peer_, kDeniedWhat, text.substr(7)),
       "it serves clients from other hosts only with a password set, which rcoord then needs "
       "from --password-file or RCOORD_PASSWORD, or with protected mode off, as it says");
}

Reply Transport::read_reply(const Deadline& deadline) {
  for (;;) {
    if (Reply r = next_parsed()) {
      check_closing(r);
      return r;
    }
    if (read_some()) continue;
    if (!wait_for(pending_wait_, deadline)) {
      fail(fmt::format("no reply from {} {}", peer_, deadline.missed("within")),
           "the server may be paused or overloaded; raise --timeout");
    }
  }
}

Reply Transport::poll_reply(const Deadline& deadline) {
  for (;;) {
    if (Reply r = next_parsed()) {
      check_closing(r);
      return r;
    }
    // Read before polling: a TLS session may hold decrypted bytes the socket no longer shows.
    if (read_some()) continue;
    if (!wait_for(pending_wait_, deadline)) return nullptr;
  }
}

}  // namespace rcoord
