#include "supervise.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "errors.hpp"
#include "signals.hpp"

namespace rcoord {
namespace {

using Clock = std::chrono::steady_clock;

// The terminal's foreground group goes to the child, so Ctrl-C and job control reach the
// command the user sees, as a shell would do; it comes back when the child is gone.
class TerminalHandover {
 public:
  explicit TerminalHandover(pid_t child_group) {
    if (isatty(STDIN_FILENO) == 0 || tcgetpgrp(STDIN_FILENO) != getpgrp()) return;
    own_group_ = getpgrp();
    set_foreground(child_group);
  }
  ~TerminalHandover() {
    if (own_group_ > 0) set_foreground(own_group_);
  }
  TerminalHandover(const TerminalHandover&) = delete;
  TerminalHandover& operator=(const TerminalHandover&) = delete;

 private:
  static void set_foreground(pid_t group) {
    // A background group calling tcsetpgrp gets SIGTTOU unless it blocks it.
    sigset_t ttou;
    sigset_t old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, &old);
    tcsetpgrp(STDIN_FILENO, group);
    sigprocmask(SIG_SETMASK, &old, nullptr);
  }
  pid_t own_group_ = -1;
};

[[noreturn]] void exec_child(const SuperviseOptions& opts) {
  setpgid(0, 0);
  signal(SIGCHLD, SIG_DFL);
  signals::restore_for_child();
  if (opts.stdin_fd >= 0 && opts.stdin_fd != STDIN_FILENO) {
    if (dup2(opts.stdin_fd, STDIN_FILENO) < 0) _exit(126);
    close(opts.stdin_fd);
  }
  for (const auto& [key, value] : opts.env) setenv(key.c_str(), value.c_str(), 1);
  std::vector<char*> argv;
  argv.reserve(opts.command.size() + 1);
  for (const auto& a : opts.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  int err = errno;
  std::fprintf(stderr, "rcoord: cannot run '%s': %s (check the command and PATH)\n", argv[0],
               std::strerror(err));
  _exit(err == ENOENT ? 127 : 126);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

timespec to_timespec(Clock::duration d) {
  auto ns =
      std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

// The state of one supervised run: the child, the lease deadlines, and the loss handling.
class Supervisor {
 public:
  Supervisor(const SuperviseOptions& opts, Lease& lease) : opts_(opts), lease_(lease) {}

  SuperviseResult run(pid_t child) {
    child_ = child;
    auto now = Clock::now();
    lease_end_ = now + lease_.ttl;
    next_renewal_ = now + lease_.ttl / 3;
    sigset_t waitset = signals::managed_set();
    sigaddset(&waitset, SIGCHLD);
    while (!reap()) {
      timespec ts = to_timespec(next_deadline() - Clock::now());
      siginfo_t info{};
      int sig = sigtimedwait(&waitset, &info, &ts);
      if (sig == SIGCHLD) continue;  // reap() at the top of the loop
      if (sig > 0) {
        forward(sig);
        continue;
      }
      if (errno == EAGAIN) on_deadline();
    }
    if (result_.lost) kill(-child_, SIGKILL);  // nothing of the group may run unlocked
    return result_;
  }

 private:
  bool reap() {
    int status = 0;
    pid_t pid = waitpid(child_, &status, WNOHANG);
    if (pid != child_) return false;
    result_.exit_code = exit_code_of(status);
    return true;
  }

  Clock::time_point next_deadline() const {
    return kill_deadline_ ? *kill_deadline_ : next_renewal_;
  }

  void forward(int sig) {
    signals::record(sig);
    // Graceful: the first signal asks rcoord to stop after this child; the next one is for it.
    if (opts_.graceful && ++signals_held_ == 1) return;
    result_.forwarded_signal = sig;
    kill(-child_, sig);
  }

  void on_deadline() {
    if (kill_deadline_) {
      kill(-child_, SIGKILL);
      kill_deadline_ = Clock::time_point::max();  // keep waiting for the child to be reaped
      return;
    }
    renew();
  }

  void renew() {
    signals::Uninterruptible quiet;  // a signal during renewal is forwarded afterwards
    // Redis starts the new TTL somewhere between our send and its reply: count from the send,
    // so our idea of the lease never outlives the server's.
    auto sent = Clock::now();
    try {
      if (lease_.renew()) {
        lease_end_ = sent + lease_.ttl;
        next_renewal_ = sent + lease_.ttl / 3;
      } else {
        lose("it is now held by someone else or was deleted");
      }
    } catch (const Error& e) {
      if (e.code() != kConnection) {
        lose(fmt::format("renewal failed: {}", e.what()));
        return;
      }
      // Redis unreachable: keep trying while the lease can still be ours.
      auto retry = std::clamp<Clock::duration>(lease_.ttl / 10, Millis(50), Millis(1000));
      if (Clock::now() + retry >= lease_end_) {
        lose(fmt::format("Redis stayed unreachable until the lease ran out: {}", e.what()));
      } else {
        next_renewal_ = Clock::now() + retry;
      }
    }
  }

  void lose(std::string reason) {
    result_.lost = true;
    result_.lost_reason = std::move(reason);
    kill(-child_, SIGTERM);
    kill_deadline_ = Clock::now() + opts_.kill_grace;
  }

  const SuperviseOptions& opts_;
  Lease& lease_;
  pid_t child_ = -1;
  Clock::time_point lease_end_;
  Clock::time_point next_renewal_;
  std::optional<Clock::time_point> kill_deadline_;
  int signals_held_ = 0;
  SuperviseResult result_;
};

}  // namespace

SuperviseResult supervise(const SuperviseOptions& opts, Lease& lease) {
  if (opts.command.empty()) {
    throw Error(kUsage, "no command to run", "put the command after --, e.g. -- ./backup.sh");
  }
  signals::install();
  // SIGCHLD is taken with sigtimedwait, so it must be blocked before the child exists.
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  signal(SIGCHLD, SIG_DFL);  // an inherited SIG_IGN would reap the child behind our back

  std::fflush(nullptr);
  pid_t child = fork();
  if (child < 0) {
    throw Error(kServer, fmt::format("cannot fork: {}", std::strerror(errno)),
                "check the process limits (ulimit -u)");
  }
  if (child == 0) exec_child(opts);
  setpgid(child, child);  // both sides set it, so neither races the other
  std::optional<TerminalHandover> terminal;
  if (!opts.graceful) terminal.emplace(child);
  Supervisor supervisor(opts, lease);
  return supervisor.run(child);
}

}  // namespace rcoord
