#include "connection.hpp"

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

#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

#include "cluster.hpp"
#include "errors.hpp"
#include "keys.hpp"
#include "signals.hpp"

namespace rcoord {
namespace {

constexpr const char* kConnectHint = "set --url or RCOORD_URL";
constexpr const char* kAuthHint =
    "check --user and the password (--password-file, RCOORD_PASSWORD)";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string error_text(const redisReply* r) { return {r->str, r->len}; }

bool is_auth_error(std::string_view msg) {
  // Redis answers a long command from an unauthenticated client with a protocol error
  // instead of NOAUTH: it is the same missing password.
  return starts_with(msg, "NOAUTH") || starts_with(msg, "WRONGPASS") ||
         starts_with(msg, "ERR Protocol error: unauthenticated") ||
         starts_with(msg, "ERR invalid password") || starts_with(msg, "ERR AUTH");
}

// A server that wants a password answers every command with NOAUTH. Whatever the command
// (a pipeline that decodes its own replies, a bloom stream), that is an authentication
// failure: exit 3 with the hint, never a server error or an "unexpected reply".
bool is_auth_reply(const Reply& r) {
  return r && r->type == REDIS_REPLY_ERROR && is_auth_error(error_text(r.get()));
}

Error auth_error(const redisReply* r) {
  return {kConnection, fmt::format("authentication required: {}", error_text(r)), kAuthHint};
}

void format_args(const Args& args, std::string& out) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  char* cmd = nullptr;
  int len = redisFormatCommandArgv(&cmd, static_cast<int>(args.size()), argv.data(), lens.data());
  if (len < 0 || cmd == nullptr) throw Error(kServer, "cannot format a Redis command");
  out.append(cmd, static_cast<std::size_t>(len));
  std::free(cmd);
}

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

Connection::Connection(Endpoint endpoint, Millis timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout) {}

Connection::~Connection() { close(); }

Connection::Connection(Connection&& other) noexcept
    : endpoint_(std::move(other.endpoint_)),
      timeout_(other.timeout_),
      fd_(std::exchange(other.fd_, -1)),
      reader_(std::exchange(other.reader_, nullptr)),
      tls_ctx_(std::exchange(other.tls_ctx_, nullptr)),
      tls_(std::exchange(other.tls_, nullptr)),
      io_error_(std::move(other.io_error_)),
      pending_wait_(other.pending_wait_),
      wait_replicas_(other.wait_replicas_),
      request_sent_(other.request_sent_),
      cap_(other.cap_),
      asked_(std::move(other.asked_)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    endpoint_ = std::move(other.endpoint_);
    timeout_ = other.timeout_;
    fd_ = std::exchange(other.fd_, -1);
    reader_ = std::exchange(other.reader_, nullptr);
    tls_ctx_ = std::exchange(other.tls_ctx_, nullptr);
    tls_ = std::exchange(other.tls_, nullptr);
    io_error_ = std::move(other.io_error_);
    pending_wait_ = other.pending_wait_;
    wait_replicas_ = other.wait_replicas_;
    request_sent_ = other.request_sent_;
    cap_ = other.cap_;
    asked_ = std::move(other.asked_);
  }
  return *this;
}

void Connection::close() {
  if (tls_ != nullptr) SSL_free(tls_);
  tls_ = nullptr;
  if (tls_ctx_ != nullptr) SSL_CTX_free(tls_ctx_);
  tls_ctx_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (reader_ != nullptr) redisReaderFree(reader_);
  reader_ = nullptr;
}

void Connection::abort() {
  if (fd_ >= 0) {
    // RST instead of FIN: what our kernel still holds of a request we gave up on is dropped,
    // so it cannot reach the server later (after a partition heals) and take something there.
    linger rst{1, 0};
    setsockopt(fd_, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
  }
  close();
}

void Connection::fail(const std::string& what, const std::string& hint) {
  abort();
  throw Error(kConnection, what, hint);
}

Connection::Clock::time_point Connection::within(Millis wait) const {
  auto now = Clock::now();
  if (cap_ <= now) return cap_;
  return wait >= std::chrono::duration_cast<Millis>(cap_ - now) ? cap_ : now + wait;
}

std::string Connection::waited(Clock::time_point until, std::string_view preposition) const {
  if (until == cap_ && cap_ != Clock::time_point::max()) return "by its deadline";
  return fmt::format("{} {}", preposition, format_duration(timeout_));
}

bool Connection::wait_for(short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    timespec ts{static_cast<time_t>(left.count() / 1'000'000'000),
                static_cast<long>(left.count() % 1'000'000'000)};
    pollfd p{fd_, events, 0};
    int n = ppoll(&p, 1, &ts, signals::wait_mask());
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR)
      fail(fmt::format("poll failed on {}: {}", endpoint_.describe(), std::strerror(errno)),
           kConnectHint);
    if (signals::wait_mask() != nullptr && signals::pending() != 0) {
      abort();  // a reply may be in flight; this socket cannot be reused
      throw Error(kInterrupted, fmt::format("interrupted by signal {}", signals::pending()));
    }
  }
}

void Connection::connect_socket(Clock::time_point deadline) {
  if (!endpoint_.socket_path.empty()) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (endpoint_.socket_path.size() >= sizeof(addr.sun_path)) {
      throw Error(kUsage, fmt::format("unix socket path too long: {}", endpoint_.socket_path),
                  "use a path shorter than 108 bytes");
    }
    std::memcpy(addr.sun_path, endpoint_.socket_path.c_str(), endpoint_.socket_path.size() + 1);
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) fail("cannot create a socket", std::strerror(errno));
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 &&
        errno != EINPROGRESS && errno != EAGAIN) {
      fail(fmt::format("cannot connect to {}: {}", endpoint_.describe(), std::strerror(errno)),
           kConnectHint);
    }
    return;
  }

  // Numeric addresses skip the resolver entirely (no NSS modules loaded: cheaper start-up).
  sockaddr_storage storage{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  auto port = htons(static_cast<std::uint16_t>(endpoint_.port));
  if (inet_pton(AF_INET, endpoint_.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = port;
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, endpoint_.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = port;
    len = sizeof(sockaddr_in6);
  } else {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = getaddrinfo(endpoint_.host.c_str(), nullptr, &hints, &found);
    if (rc != 0 || found == nullptr) {
      fail(fmt::format("cannot resolve host '{}': {}", endpoint_.host, gai_strerror(rc)),
           kConnectHint);
    }
    std::memcpy(&storage, found->ai_addr, found->ai_addrlen);
    len = found->ai_addrlen;
    freeaddrinfo(found);
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = port;  // same offset in sockaddr_in6
  }

  fd_ = ::socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) fail("cannot create a socket", std::strerror(errno));
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&storage), len) != 0) {
    if (errno != EINPROGRESS) {
      fail(fmt::format("cannot connect to {}: {}", endpoint_.describe(), std::strerror(errno)),
           kConnectHint);
    }
    if (!wait_for(POLLOUT, deadline)) {
      fail(fmt::format("cannot connect to {}: timed out {}", endpoint_.describe(),
                       waited(deadline, "after")),
           "check the address, or raise --timeout");
    }
    int err = 0;
    socklen_t err_len = sizeof(err);
    getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &err_len);
    if (err != 0) {
      fail(fmt::format("cannot connect to {}: {}", endpoint_.describe(), std::strerror(err)),
           kConnectHint);
    }
  }
}

bool Connection::handshake(Clock::time_point deadline) {
  std::vector<Args> hello;
  if (endpoint_.password) {
    if (endpoint_.user.empty()) {
      hello.push_back({"AUTH", *endpoint_.password});
    } else {
      hello.push_back({"AUTH", endpoint_.user, *endpoint_.password});
    }
  }
  if (endpoint_.db != 0) hello.push_back({"SELECT", std::to_string(endpoint_.db)});
  // Right after a failover a sentinel may still name the old master, now a replica.
  bool check_role = !endpoint_.sentinel.sentinels.empty();
  if (check_role) hello.push_back({"ROLE"});
  if (hello.empty()) return true;
  std::string out;
  for (const auto& cmd : hello) format_args(cmd, out);
  write_all(out, deadline);
  bool is_master = true;
  for (const auto& cmd : hello) {
    Reply r = read_reply(deadline);
    if (cmd[0] == "ROLE") {
      // A user without ROLE permission gets an error: trust the sentinel then.
      is_master = r->type != REDIS_REPLY_ARRAY || r->elements == 0 ||
                  reply_string(r->element[0]) == "master";
      continue;
    }
    if (r->type != REDIS_REPLY_ERROR) continue;
    std::string msg = error_text(r.get());
    if (cmd[0] == "AUTH") {
      std::string who =
          endpoint_.user.empty() ? "the default user" : "user '" + endpoint_.user + "'";
      fail(fmt::format("authentication failed for {} at {}: {}", who, endpoint_.describe(), msg),
           kAuthHint);
    }
    close();
    throw Error(
        kServer,
        fmt::format("cannot select db {} on {}: {}", endpoint_.db, endpoint_.describe(), msg),
        "use a db index the server has (see 'databases' in redis.conf)");
  }
  return is_master;
}

void Connection::ensure_connected() {
  if (fd_ >= 0) return;
  auto deadline = within(timeout_);
  bool via_sentinel = !endpoint_.sentinel.sentinels.empty();
  for (;;) {
    if (via_sentinel) find_master(deadline);
    connect_socket(deadline);
    if (endpoint_.tls) start_tls(deadline);
    reader_ = redisReaderCreate();
    if (reader_ == nullptr) fail("out of memory", "");
    if (handshake(deadline)) return;
    // The sentinels have not caught up with a failover yet: ask again shortly.
    std::string former = endpoint_.describe();
    close();
    if (Clock::now() + Millis(100) >= deadline) {
      throw Error(kConnection,
                  fmt::format("the sentinels name {} as master '{}', but it is a replica", former,
                              endpoint_.sentinel.master),
                  "a failover may be under way; try again, or raise --timeout");
    }
    if (!signals::sleep_until(Clock::now() + Millis(100))) {
      throw Error(kInterrupted, fmt::format("interrupted by signal {}", signals::pending()));
    }
  }
}

void Connection::find_master(Clock::time_point deadline) {
  const auto& sentinel = endpoint_.sentinel;
  std::string tried;
  for (const auto& address : sentinel.sentinels) {
    Endpoint at = sentinel_endpoint(endpoint_, address);
    auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
    if (left.count() <= 0) break;
    try {
      Connection conn(at, left);
      Reply r = conn.command({"SENTINEL", "get-master-addr-by-name", sentinel.master});
      if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
        endpoint_.host = reply_string(r->element[0]);
        endpoint_.port = static_cast<int>(reply_integer(r->element[1]));
        return;
      }
      tried += fmt::format("{}{} does not know master '{}'", tried.empty() ? "" : "; ",
                           at.describe(), sentinel.master);
    } catch (const Error& e) {
      tried += fmt::format("{}{}", tried.empty() ? "" : "; ", e.what());
    }
  }
  throw Error(kConnection,
              fmt::format("no sentinel gave the address of master '{}': {}", sentinel.master,
                          tried.empty() ? "timed out" : tried),
              "check --sentinel and --sentinel-master");
}

void Connection::start_tls(Clock::time_point deadline) {
  const TlsSettings& t = endpoint_.tls_settings;
  tls_ctx_ = SSL_CTX_new(TLS_client_method());
  if (tls_ctx_ == nullptr) fail("cannot set up TLS", tls_error_text());
  SSL_CTX_set_min_proto_version(tls_ctx_, TLS1_2_VERSION);
  auto bad_file = [&](const char* what, const std::string& file) {
    std::string why = tls_error_text();
    close();
    throw Error(kUsage, fmt::format("cannot use {} '{}': {}", what, file, why),
                "give a readable PEM file");
  };
  if (!t.insecure) {
    SSL_CTX_set_verify(tls_ctx_, SSL_VERIFY_PEER, nullptr);
    if (!t.ca_file.empty()) {
      if (SSL_CTX_load_verify_locations(tls_ctx_, t.ca_file.c_str(), nullptr) != 1) {
        bad_file("the CA file", t.ca_file);
      }
    } else {
      SSL_CTX_set_default_verify_paths(tls_ctx_);
    }
  }
  if (!t.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(tls_ctx_, t.cert_file.c_str()) != 1) {
      bad_file("the client certificate", t.cert_file);
    }
    const std::string& key = t.key_file.empty() ? t.cert_file : t.key_file;
    if (SSL_CTX_use_PrivateKey_file(tls_ctx_, key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(tls_ctx_) != 1) {
      bad_file("the client key", key);
    }
  }
  tls_ = SSL_new(tls_ctx_);
  if (tls_ == nullptr || SSL_set_fd(tls_, fd_) != 1) fail("cannot set up TLS", tls_error_text());
  const std::string& name = t.sni.empty() ? endpoint_.host : t.sni;
  if (!is_ip_literal(name)) {
    // SSL_set_tlsext_host_name, spelled out: the macro's C cast trips -Wold-style-cast.
    SSL_ctrl(tls_, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(name.c_str()));
  }
  if (!t.insecure) {
    if (is_ip_literal(name)) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls_), name.c_str());
    } else {
      SSL_set1_host(tls_, name.c_str());
    }
  }
  for (;;) {
    ERR_clear_error();
    int rc = SSL_connect(tls_);
    if (rc == 1) return;
    int err = SSL_get_error(tls_, rc);
    short wait = 0;
    if (err == SSL_ERROR_WANT_READ) wait = POLLIN;
    if (err == SSL_ERROR_WANT_WRITE) wait = POLLOUT;
    if (wait == 0) {
      long verified = SSL_get_verify_result(tls_);
      if (verified != X509_V_OK) {
        fail(fmt::format("TLS certificate of {} was refused: {}", endpoint_.describe(),
                         X509_verify_cert_error_string(verified)),
             verify_hint(verified));
      }
      std::string why = tls_error_text();
      fail(fmt::format("TLS handshake with {} failed: {}", endpoint_.describe(),
                       why.empty() ? "the server closed the connection" : why),
           "check that this port speaks TLS, and --tls-cert/--tls-key if the server "
           "requires a client certificate");
    }
    if (!wait_for(wait, deadline)) {
      fail(fmt::format("TLS handshake with {} timed out {}", endpoint_.describe(),
                       waited(deadline, "after")),
           "check that this port speaks TLS, or raise --timeout");
    }
  }
}

Connection::Io Connection::send_some(std::string_view data) {
  if (tls_ != nullptr) {
    SigpipeBlocked no_sigpipe;
    ERR_clear_error();
    std::size_t written = 0;
    if (SSL_write_ex(tls_, data.data(), data.size(), &written) == 1) {
      return {static_cast<std::ptrdiff_t>(written), 0};
    }
    return tls_outcome(-1);
  }
  for (;;) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n >= 0) return {n, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {-1, POLLOUT};
    io_error_ = std::strerror(errno);
    return {-1, 0};
  }
}

Connection::Io Connection::recv_some(char* buf, std::size_t len) {
  if (tls_ != nullptr) {
    ERR_clear_error();
    std::size_t got = 0;
    if (SSL_read_ex(tls_, buf, len, &got) == 1) return {static_cast<std::ptrdiff_t>(got), 0};
    return tls_outcome(-1);
  }
  for (;;) {
    ssize_t n = ::recv(fd_, buf, len, 0);
    if (n >= 0) return {n, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {-1, POLLIN};
    io_error_ = std::strerror(errno);
    return {-1, 0};
  }
}

Connection::Io Connection::tls_outcome(int rc) {
  switch (SSL_get_error(tls_, rc)) {
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

void Connection::write_all(std::string_view data, Clock::time_point deadline) {
  while (!data.empty()) {
    Io io = send_some(data);
    if (io.bytes > 0) {
      data.remove_prefix(static_cast<std::size_t>(io.bytes));
      continue;
    }
    if (io.wait != 0) {
      if (!wait_for(io.wait, deadline)) {
        fail(fmt::format("timed out writing to {} {}", endpoint_.describe(),
                         waited(deadline, "after")),
             "the server may be paused or overloaded; raise --timeout");
      }
      continue;
    }
    fail(fmt::format("cannot write to {}: {}", endpoint_.describe(),
                     io.bytes == 0 ? "the server closed the connection" : io_error_),
         "check that the server is up");
  }
}

bool Connection::read_some() {
  char buf[16384];
  Io io = recv_some(buf, sizeof(buf));
  if (io.bytes > 0) {
    redisReaderFeed(reader_, buf, static_cast<std::size_t>(io.bytes));
    return true;
  }
  if (io.bytes == 0) {
    fail(fmt::format("connection to {} closed by the server", endpoint_.describe()),
         "check the server log; it may have restarted or hit its client limits");
  }
  if (io.wait == 0) {
    fail(fmt::format("cannot read from {}: {}", endpoint_.describe(), io_error_),
         "check that the server is up");
  }
  pending_wait_ = io.wait;
  return false;
}

Reply Connection::read_reply(Clock::time_point deadline) {
  for (;;) {
    if (Reply r = next_parsed()) return r;
    if (read_some()) continue;
    if (!wait_for(pending_wait_, deadline)) {
      fail(fmt::format("no reply from {} {}", endpoint_.describe(), waited(deadline, "within")),
           "the server may be paused or overloaded; raise --timeout");
    }
  }
}

Reply Connection::next_parsed() {
  void* raw = nullptr;
  if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
    fail(fmt::format("protocol error from {}: {}", endpoint_.describe(), reader_->errstr),
         "is this a Redis server? check --url");
  }
  return Reply(static_cast<redisReply*>(raw));
}

Reply Connection::command_raw(const Args& args) {
  auto replies = pipeline({args});
  return std::move(replies.front());
}

Reply Connection::command(const Args& args) {
  Reply r = command_raw(args);
  check_reply(r, args.empty() ? std::string_view{} : std::string_view(args[0]));
  return r;
}

Reply Connection::command_blocking(const Args& args, Millis block) {
  Reply r = std::move(routed({args}, block).front());
  // BLPOP/BLMOVE block on the key after the command: a wake list of an rcoord object.
  check_key_reply(r, args[0], args.size() > 1 ? std::string_view(args[1]) : std::string_view{});
  return r;
}

Reply Connection::receive(Millis block) {
  if (fd_ < 0) {
    throw Error(kConnection, fmt::format("not connected to {}", endpoint_.describe()),
                "subscribe before waiting for messages");
  }
  auto deadline = within(block);
  for (;;) {
    if (Reply r = next_parsed()) return r;
    // Read before polling: a TLS session may hold decrypted bytes the socket no longer shows.
    if (read_some()) continue;
    if (!wait_for(pending_wait_, deadline)) return nullptr;
  }
}

std::vector<Reply> Connection::pipeline(const std::vector<Args>& commands) {
  return routed(commands, Millis(0));
}

std::vector<Reply> Connection::exchange(const std::vector<Args>& commands, Millis extra) {
  request_sent_ = false;
  ensure_connected();
  std::string out;
  for (const auto& cmd : commands) format_args(cmd, out);
  request_sent_ = true;
  write_all(out, within(timeout_));
  auto deadline = within(extra + timeout_);
  std::vector<Reply> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) replies.push_back(read_reply(deadline));
  for (const auto& r : replies) {
    if (is_auth_reply(r)) throw auth_error(r.get());
  }
  return replies;
}

std::vector<Reply> Connection::routed(const std::vector<Args>& commands, Millis extra) {
  using Kind = cluster::Redirect::Kind;
  cluster::Budget budget;
  asked_.reset();
  for (;;) {
    auto replies = exchange(commands, extra);
    auto to = cluster::pipeline_redirect(replies);
    if (to.kind == Kind::kNone) return replies;
    if (to.kind == Kind::kTryAgain) {
      budget.pause(to);
      continue;
    }
    budget.hop(to);
    Endpoint target = cluster::endpoint_at(endpoint_, to);
    if (to.kind == Kind::kMoved) {
      // The slot lives there now: move this connection for good.
      close();
      endpoint_ = std::move(target);
      continue;
    }
    // ASK: the slot is being migrated and these keys are on the target already. Ask it
    // once, without moving: the next command may find its keys here again.
    std::vector<Args> asking;
    for (const auto& cmd : commands) {
      asking.push_back({"ASKING"});
      asking.push_back(cmd);
    }
    asked_ = std::make_unique<Connection>(std::move(target), timeout_);
    asked_->set_deadline(cap_);
    auto answers = asked_->exchange(asking, extra);
    replies.clear();
    for (std::size_t i = 1; i < answers.size(); i += 2) replies.push_back(std::move(answers[i]));
    auto again = cluster::pipeline_redirect(replies);
    if (again.kind == Kind::kNone) return replies;
    asked_.reset();
    // TRYAGAIN (keys split between the two nodes) or the migration moved on: start over.
    if (again.kind == Kind::kTryAgain) budget.pause(again);
  }
}

void Connection::send_formatted(std::string_view resp) {
  asked_.reset();  // these writes go to this node, whatever served the last command
  ensure_connected();
  request_sent_ = true;
  write_all(resp, within(timeout_));
}

Reply Connection::receive() {
  if (fd_ < 0) throw Error(kConnection, "no reply pending: the connection was closed");
  Reply r = read_reply(within(timeout_));
  if (is_auth_reply(r)) {
    close();  // the replies still on the way are refused too
    throw auth_error(r.get());
  }
  return r;
}

void Connection::await_replicas() {
  if (wait_replicas_ <= 0) return;
  if (asked_) {
    // The write went to the node of an ASK redirect: its replicas are the ones to wait for.
    auto there = std::move(asked_);
    there->set_wait_replicas(wait_replicas_);
    there->await_replicas();
    return;
  }
  ensure_connected();
  // WAIT itself takes up to the timeout (or what is left before the deadline); its reply
  // gets one more timeout to arrive.
  Millis wait = timeout_;
  if (cap_ != Clock::time_point::max()) {
    wait = std::clamp(std::chrono::duration_cast<Millis>(cap_ - Clock::now()), Millis(1), wait);
  }
  std::string out;
  format_args({"WAIT", std::to_string(wait_replicas_), std::to_string(wait.count())}, out);
  write_all(out, within(timeout_));
  Reply r = read_reply(within(2 * timeout_));
  check_reply(r, "WAIT");
  std::int64_t acked = reply_integer(r.get());
  if (acked < wait_replicas_) {
    throw ReplicaShortfall(
        kConnection,
        fmt::format("only {} of {} replicas acknowledged the write to {} within {}", acked,
                    wait_replicas_, endpoint_.describe(), format_duration(timeout_)),
        "check the replicas (rcoord doctor), lower --wait-replicas, or raise --timeout");
  }
}

void append_command(std::string& out, const Args& args) {
  out += '*';
  out += std::to_string(args.size());
  out += "\r\n";
  for (const auto& a : args) {
    out += '$';
    out += std::to_string(a.size());
    out += "\r\n";
    out += a;
    out += "\r\n";
  }
}

Error reply_error(const std::string& msg, std::string_view what) {
  if (is_auth_error(msg)) {
    return Error(kConnection, fmt::format("authentication required: {}", msg), kAuthHint);
  }
  if (starts_with(msg, "CLUSTERDOWN")) {
    return Error(kServer, fmt::format("cluster error: {} failed: {}", what, msg),
                 "the cluster cannot serve this key now; check it with 'rcoord doctor'");
  }
  if (starts_with(msg, "CROSSSLOT") || starts_with(msg, "MOVED ") || starts_with(msg, "ASK ")) {
    // A redirect left here came from a bulk stream or a pipeline that only partly ran.
    return Error(kServer, fmt::format("cluster error: {} failed: {}", what, msg),
                 "run the command again; if it persists, report it as a bug");
  }
  if (starts_with(msg, "NOPERM")) {
    return Error(kServer, fmt::format("{} refused by ACL: {}", what, msg),
                 "grant the rcoord ACL rule to this user (see the README)");
  }
  return Error(kServer, fmt::format("{} failed: {}", what, msg));
}

void check_reply(const Reply& r, std::string_view what) {
  if (r->type != REDIS_REPLY_ERROR) return;
  throw reply_error(error_text(r.get()), what);
}

void check_key_reply(const Reply& r, std::string_view what, std::string_view key) {
  if (r->type == REDIS_REPLY_ERROR && starts_with(error_text(r.get()), "WRONGTYPE")) {
    throw foreign_key_error(key, "another type than rcoord keeps there");
  }
  check_reply(r, what);
}

std::int64_t reply_integer(const redisReply* r) {
  if (r->type == REDIS_REPLY_INTEGER) return r->integer;
  if (r->type == REDIS_REPLY_STRING) {
    try {
      return std::stoll(std::string(r->str, r->len));
    } catch (const std::exception&) {
    }
  }
  throw Error(kServer, "unexpected reply from the server: expected an integer");
}

std::string reply_string(const redisReply* r) {
  if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) return {r->str, r->len};
  if (r->type == REDIS_REPLY_INTEGER) return std::to_string(r->integer);
  if (r->type == REDIS_REPLY_NIL) return {};
  throw Error(kServer, "unexpected reply from the server: expected a string");
}

bool reply_is_nil(const redisReply* r) { return r->type == REDIS_REPLY_NIL; }

}  // namespace rcoord
