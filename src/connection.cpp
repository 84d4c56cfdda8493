#include "connection.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "cluster.hpp"
#include "errors.hpp"
#include "signals.hpp"

namespace rcoord {
namespace {

constexpr const char* kConnectHint = "set --url or RCOORD_URL";
constexpr const char* kAuthHint =
    "check --user and the password (--password-file, RCOORD_PASSWORD)";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string error_text(const redisReply* r) { return std::string(r->str, r->len); }

bool is_auth_error(std::string_view msg) {
  // Redis answers a long command from an unauthenticated client with a protocol error
  // instead of NOAUTH: it is the same missing password.
  return starts_with(msg, "NOAUTH") || starts_with(msg, "WRONGPASS") ||
         starts_with(msg, "ERR Protocol error: unauthenticated") ||
         starts_with(msg, "ERR invalid password") || starts_with(msg, "ERR AUTH");
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

}  // namespace

Connection::Connection(Endpoint endpoint, Millis timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout) {}

Connection::~Connection() { close(); }

Connection::Connection(Connection&& other) noexcept
    : endpoint_(std::move(other.endpoint_)),
      timeout_(other.timeout_),
      fd_(std::exchange(other.fd_, -1)),
      reader_(std::exchange(other.reader_, nullptr)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    endpoint_ = std::move(other.endpoint_);
    timeout_ = other.timeout_;
    fd_ = std::exchange(other.fd_, -1);
    reader_ = std::exchange(other.reader_, nullptr);
  }
  return *this;
}

void Connection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (reader_ != nullptr) redisReaderFree(reader_);
  reader_ = nullptr;
}

void Connection::fail(const std::string& what, const std::string& hint) {
  close();
  throw Error(kConnection, what, hint);
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
      close();  // a reply may be in flight; this socket cannot be reused
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
      fail(fmt::format("cannot connect to {}: timed out after {}", endpoint_.describe(),
                       format_duration(timeout_)),
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

void Connection::handshake(Clock::time_point deadline) {
  std::vector<Args> hello;
  if (endpoint_.password) {
    if (endpoint_.user.empty()) {
      hello.push_back({"AUTH", *endpoint_.password});
    } else {
      hello.push_back({"AUTH", endpoint_.user, *endpoint_.password});
    }
  }
  if (endpoint_.db != 0) hello.push_back({"SELECT", std::to_string(endpoint_.db)});
  if (hello.empty()) return;
  std::string out;
  for (const auto& cmd : hello) format_args(cmd, out);
  write_all(out, deadline);
  for (const auto& cmd : hello) {
    Reply r = read_reply(deadline);
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
}

void Connection::ensure_connected() {
  if (fd_ >= 0) return;
  if (endpoint_.tls) {
    throw Error(kUsage, "rediss:// (TLS) is not supported by this build yet",
                "connect without TLS, e.g. through a local stunnel, until TLS support lands");
  }
  auto deadline = Clock::now() + timeout_;
  connect_socket(deadline);
  reader_ = redisReaderCreate();
  if (reader_ == nullptr) fail("out of memory", "");
  handshake(deadline);
}

void Connection::write_all(std::string_view data, Clock::time_point deadline) {
  while (!data.empty()) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(POLLOUT, deadline)) {
        fail(fmt::format("timed out writing to {} after {}", endpoint_.describe(),
                         format_duration(timeout_)),
             "the server may be paused or overloaded; raise --timeout");
      }
      continue;
    }
    fail(fmt::format("cannot write to {}: {}", endpoint_.describe(), std::strerror(errno)),
         "check that the server is up");
  }
}

Reply Connection::read_reply(Clock::time_point deadline) {
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
      fail(fmt::format("protocol error from {}: {}", endpoint_.describe(), reader_->errstr),
           "is this a Redis server? check --url");
    }
    if (raw != nullptr) return Reply(static_cast<redisReply*>(raw));
    char buf[16384];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) {
      redisReaderFeed(reader_, buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) {
      fail(fmt::format("connection to {} closed by the server", endpoint_.describe()),
           "check the server log; it may have restarted or hit its client limits");
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(POLLIN, deadline)) {
        fail(fmt::format("no reply from {} within {}", endpoint_.describe(),
                         format_duration(timeout_)),
             "the server may be paused or overloaded; raise --timeout");
      }
      continue;
    }
    fail(fmt::format("cannot read from {}: {}", endpoint_.describe(), std::strerror(errno)),
         "check that the server is up");
  }
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
  check_reply(r, args[0]);
  return r;
}

Reply Connection::receive(Millis block) {
  if (fd_ < 0) {
    throw Error(kConnection, fmt::format("not connected to {}", endpoint_.describe()),
                "subscribe before waiting for messages");
  }
  auto deadline = Clock::now() + block;
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
      fail(fmt::format("protocol error from {}: {}", endpoint_.describe(), reader_->errstr),
           "is this a Redis server? check --url");
    }
    if (raw != nullptr) return Reply(static_cast<redisReply*>(raw));
    if (!wait_for(POLLIN, deadline)) return nullptr;
    char buf[16384];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) {
      redisReaderFeed(reader_, buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      fail(fmt::format("connection to {} closed by the server", endpoint_.describe()),
           "check the server log; it may have restarted or hit its client limits");
    } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      fail(fmt::format("cannot read from {}: {}", endpoint_.describe(), std::strerror(errno)),
           "check that the server is up");
    }
  }
}

std::vector<Reply> Connection::pipeline(const std::vector<Args>& commands) {
  return routed(commands, Millis(0));
}

std::vector<Reply> Connection::exchange(const std::vector<Args>& commands, Millis extra) {
  ensure_connected();
  std::string out;
  for (const auto& cmd : commands) format_args(cmd, out);
  write_all(out, Clock::now() + timeout_);
  auto deadline = Clock::now() + extra + timeout_;
  std::vector<Reply> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) replies.push_back(read_reply(deadline));
  return replies;
}

std::vector<Reply> Connection::routed(const std::vector<Args>& commands, Millis extra) {
  using Kind = cluster::Redirect::Kind;
  cluster::Budget budget;
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
    Connection there(std::move(target), timeout_);
    auto answers = there.exchange(asking, extra);
    replies.clear();
    for (std::size_t i = 1; i < answers.size(); i += 2) replies.push_back(std::move(answers[i]));
    auto again = cluster::pipeline_redirect(replies);
    if (again.kind == Kind::kNone) return replies;
    // TRYAGAIN (keys split between the two nodes) or the migration moved on: start over.
    if (again.kind == Kind::kTryAgain) budget.pause(again);
  }
}

void Connection::send_formatted(std::string_view resp) {
  ensure_connected();
  write_all(resp, Clock::now() + timeout_);
}

Reply Connection::receive() {
  if (fd_ < 0) throw Error(kConnection, "no reply pending: the connection was closed");
  return read_reply(Clock::now() + timeout_);
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

void check_reply(const Reply& r, std::string_view what) {
  if (r->type != REDIS_REPLY_ERROR) return;
  std::string msg = error_text(r.get());
  if (is_auth_error(msg)) {
    throw Error(kConnection, fmt::format("authentication required: {}", msg), kAuthHint);
  }
  if (starts_with(msg, "CLUSTERDOWN")) {
    throw Error(kServer, fmt::format("cluster error: {} failed: {}", what, msg),
                "the cluster cannot serve this key now; check it with 'rcoord doctor'");
  }
  if (starts_with(msg, "CROSSSLOT") || cluster::is_redirect(r.get())) {
    // A redirect left here came from a bulk stream or a pipeline that only partly ran.
    throw Error(kServer, fmt::format("cluster error: {} failed: {}", what, msg),
                "run the command again; if it persists, report it as a bug");
  }
  if (starts_with(msg, "NOPERM")) {
    throw Error(kServer, fmt::format("{} refused by ACL: {}", what, msg),
                "grant the rcoord ACL rule to this user (see the README)");
  }
  throw Error(kServer, fmt::format("{} failed: {}", what, msg));
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
