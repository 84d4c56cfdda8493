#include "guard.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>

#include "errors.hpp"

namespace rcoord {
namespace {

using Clock = Guard::Clock;

constexpr std::size_t kSharedBytes = 4096;
// Even a lease with almost no room before its stop point is not looked at more often.
constexpr Millis kShortestCheck{10};

// close_range(2) through syscall(): the C library's wrapper came with glibc 2.34, and musl
// has none. -1 with errno (ENOSYS before Linux 5.9, or where the headers lack the number).
int close_fd_range(unsigned first, unsigned last) {
#ifdef SYS_close_range
  return static_cast<int>(::syscall(SYS_close_range, first, last, 0U));
#else
  (void)first;
  (void)last;
  errno = ENOSYS;
  return -1;
#endif
}

// Closes every descriptor from `first` on but `keep`, as a guard starts: two close_range
// calls; where that fails, one close() per descriptor below the limit of open files.
void close_all_from_but(int first, int keep) {
  auto from = static_cast<unsigned>(first);
  auto k = static_cast<unsigned>(keep);
  bool below = k <= from || close_fd_range(from, k - 1) == 0;
  if (below && close_fd_range(std::max(k + 1, from), ~0U) == 0) return;
  long open_max = sysconf(_SC_OPEN_MAX);
  int limit = open_max > 0 && open_max < 65536 ? static_cast<int>(open_max) : 65536;
  for (int fd = first; fd < limit; ++fd) {
    if (fd != keep) ::close(fd);
  }
}

// The memory shared with the guard, which the forked guard inherits: MAP_FAILED with errno
// when it cannot be mapped.
void* map_shared() {
  return mmap(nullptr, kSharedBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
}

// Waits up to `wait_ns` for the end of file of the death-notice pipe (a failed read ends
// the watch too).
bool rcoord_died(int read_end, std::int64_t wait_ns) {
  pollfd pipe{read_end, POLLIN, 0};
  timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000),
              static_cast<long>(wait_ns % 1'000'000'000)};
  int ready = ::ppoll(&pipe, 1, &ts, nullptr);
  if (ready <= 0) return false;  // the time is up (or EINTR): look again
  char byte = 0;
  ssize_t n = ::read(read_end, &byte, 1);
  return n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
}

}  // namespace

Guard& Guard::instance(Millis check_every) {
  static Guard guard(check_every);
  if (guard.write_end_ < 0) {
    throw Error(kServer, fmt::format("cannot start the guard process: {}", guard.failure_),
                "check the process limits (ulimit -u)");
  }
  return guard;
}

std::atomic<std::int32_t>* Guard::arm(Clock::time_point kill_by) const {
  shared_->kill_by.store(kill_by.time_since_epoch().count());
  return &shared_->group;
}

void Guard::extend(Clock::time_point kill_by) const {
  shared_->kill_by.store(kill_by.time_since_epoch().count());
}

void Guard::unwatch() const {
  shared_->group.store(0);
  shared_->kill_by.store(0);
}

bool Guard::struck(pid_t group) const { return shared_->struck.load() == group; }

std::optional<Clock::time_point> Guard::struck_at(pid_t group) const {
  if (!struck(group)) return std::nullopt;
  return Clock::time_point(Clock::duration(shared_->struck_at.load()));
}

bool Guard::replace_if_dead(pid_t pid) {
  if (pid != pid_) return false;
  ::close(write_end_);
  write_end_ = -1;
  start();
  if (write_end_ < 0) {
    throw Error(kServer,
                fmt::format("the guard process died and cannot be started again: {}", failure_),
                "check the process limits (ulimit -u)");
  }
  return true;
}

void Guard::ensure_running() {
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) replace_if_dead(pid_);
}

Guard::Guard(Millis check_every) : check_every_(std::max(check_every, kShortestCheck)) {
  void* shared = map_shared();
  if (shared == MAP_FAILED) {
    failure_ = std::strerror(errno);
    return;
  }
  shared_ = new (shared) Shared;
  start();
}

// Forks the guard: its pid in pid_, the death notice's write end in write_end_ (-1 with
// failure_ when it could not start).
void Guard::start() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    failure_ = std::strerror(errno);
    return;
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) serve(fds[0], *shared_, check_every_);
  int err = errno;
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    failure_ = std::strerror(err);
    return;
  }
  setpgid(pid, pid);  // both sides set it, so neither races the other
  pid_ = pid;
  write_end_ = fds[1];  // kept open until rcoord exits: its end of file is the death notice
}

void Guard::serve(int read_end, Shared& shared, Millis check_every) {
  setpgid(0, 0);
  // Only SIGKILL ends it: signals meant for rcoord (its group, a terminal) stay pending.
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  // Hold nothing open that others wait on (pipes of stdout, sockets).
  int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd <= 2; ++fd) {
    if (null >= 0 && null != fd) dup2(null, fd);
  }
  close_all_from_but(3, read_end);
  for (;;) {
    auto now = Clock::now().time_since_epoch().count();
    std::int32_t group = shared.group.load();
    std::int64_t kill_by = shared.kill_by.load();
    // A group killed for its kill point is not killed again (nor waited for).
    bool due = group > 0 && kill_by > 0 && group != shared.struck.load();
    if (due && now >= kill_by) {
      kill(-group, SIGKILL);
      shared.struck_at.store(Clock::now().time_since_epoch().count());
      shared.struck.store(group);
      due = false;
    }
    std::int64_t wait = std::chrono::nanoseconds(check_every).count();
    if (due) wait = std::min(wait, kill_by - now);
    if (rcoord_died(read_end, wait)) break;
  }
  std::int32_t last = shared.group.load();
  if (last > 0) kill(-last, SIGKILL);
  _exit(0);
}

}  // namespace rcoord
