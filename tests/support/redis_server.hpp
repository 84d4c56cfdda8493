#pragma once
// A throwaway redis-server for integration tests: started on a free loopback port with a
// Unix socket in a temp dir, persistence off; stopped by PID and cleaned up on destruction.
// Without redis-server a test that needs one is skipped (exit 77, ctest's SKIP_RETURN_CODE
// for these tests), unless RCOORD_REQUIRE_REDIS is set: then it fails.

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "connection.hpp"
#include "url.hpp"

namespace rcoord::test {

inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

/// The exit code of a test skipped for want of redis-server (ctest's SKIP_RETURN_CODE).
constexpr int kSkipped = 77;

/// The redis-server to run: $REDIS_SERVER, else `redis-server` from PATH.
inline std::string redis_server_program() {
  const char* bin = std::getenv("REDIS_SERVER");
  return bin != nullptr && *bin != '\0' ? bin : "redis-server";
}

/// Whether `program` can be executed: a path as it is, a bare name as found on PATH.
inline bool runnable(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    auto colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    if (dir.empty()) dir = ".";
    if (::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

/// Returns when redis-server can run. Otherwise: with RCOORD_REQUIRE_REDIS set (as scripts/test
/// and CI set it) throws, failing the test; without, says why in one line and exits kSkipped.
inline void need_redis_server() {
  std::string program = redis_server_program();
  if (runnable(program)) return;
  const char* required = std::getenv("RCOORD_REQUIRE_REDIS");
  if (required != nullptr && *required != '\0' && std::string_view(required) != "0") {
    throw std::runtime_error(program +
                             " not found, and RCOORD_REQUIRE_REDIS is set: install "
                             "redis-server (or set REDIS_SERVER to its path)");
  }
  std::fprintf(stderr,
               "SKIPPED: %s not found: the integration tests need a real Redis (install "
               "redis-server, or set REDIS_SERVER; with RCOORD_REQUIRE_REDIS=1 this fails)\n",
               program.c_str());
  // _Exit: this may run inside the initialisation of a function-local static (shared_server).
  std::fflush(nullptr);
  std::_Exit(kSkipped);
}

class RedisServer {
 public:
  explicit RedisServer(std::vector<std::string> extra = {}) {
    need_redis_server();
    char tmpl[] = "/tmp/rcoord-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = free_port();
      if (start(extra)) return;
      stop();
    }
    throw std::runtime_error("cannot start redis-server (is it installed?)");
  }
  ~RedisServer() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  std::string socket_path() const { return dir_ + "/redis.sock"; }
  Endpoint endpoint() const {
    Endpoint ep;
    ep.port = port_;
    return ep;
  }
  /// A fresh connection to this server with the given I/O timeout.
  Connection connect(Millis timeout = Millis(2000)) const {
    return Connection(endpoint(), timeout);
  }

  /// Stops the server the hard way (as a crash would).
  void kill_hard() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

 private:
  bool start(const std::vector<std::string>& extra) {
    std::vector<std::string> args{redis_server_program(),
                                  "--port",
                                  std::to_string(port_),
                                  "--bind",
                                  "127.0.0.1",
                                  "--unixsocket",
                                  socket_path(),
                                  "--save",
                                  "",
                                  "--appendonly",
                                  "no",
                                  "--dir",
                                  dir_,
                                  "--logfile",
                                  dir_ + "/redis.log"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      // A test before this one may have installed rcoord's signal handling, which blocks
      // SIGTERM in this process: the server would inherit that mask and outlive stop().
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 200; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;  // exited: port taken, or not installed
      }
      try {
        // Asked on its own Unix socket, made only once every port is bound: a server of
        // another test that holds the same TCP port cannot answer there.
        Endpoint own;
        own.socket_path = socket_path();
        Connection c(own, Millis(200));
        c.command({"PING"});
        return true;
      } catch (const std::exception&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    return false;
  }
  void stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

/// One server per test binary, made on first use.
inline RedisServer& shared_server() {
  static RedisServer server;
  return server;
}

/// A key prefix unique to the calling test, so cases never see each other's keys.
inline std::string unique_prefix() {
  static int counter = 0;
  return "t" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ":";
}

}  // namespace rcoord::test
