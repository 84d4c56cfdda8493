#include "supervise.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "errors.hpp"
#include "executable.hpp"
#include "fd_io.hpp"
#include "signals.hpp"

namespace rcoord {
namespace {

using Clock = std::chrono::steady_clock;

// While the command has exited and members of its group still run, the group is looked at
// this often (their deaths are not ours to be told about: their parent may be another member).
constexpr Millis kGroupPoll{20};

// Makes `group` the terminal's foreground group. A background group calling tcsetpgrp gets
// SIGTTOU unless it blocks it. Safe in the command's process before its exec (no allocation).
void hand_terminal_to(pid_t group) {
  sigset_t ttou;
  sigset_t old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  sigprocmask(SIG_BLOCK, &ttou, &old);
  tcsetpgrp(STDIN_FILENO, group);
  sigprocmask(SIG_SETMASK, &old, nullptr);
}

// Whether rcoord runs in the terminal's foreground: then its command gets the terminal, so
// that Ctrl-C, Ctrl-Z and reads of the terminal reach the command the user sees, as a shell
// would do.
bool terminal_is_ours() {
  return isatty(STDIN_FILENO) != 0 && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

// The terminal's foreground group handed to the command's group (by the command's process
// itself before its exec, and here again, so neither side races the other), taken back when
// the command's group stops (job control) or is gone, and handed to it again when rcoord is
// continued in the foreground.
class TerminalHandover {
 public:
  /// `ours`: terminal_is_ours() before the command's process started (which takes it).
  TerminalHandover(pid_t child_group, bool ours) : child_group_(child_group) {
    if (!ours) return;
    own_group_ = getpgrp();
    hand_terminal_to(child_group_);
  }
  ~TerminalHandover() { take_back(); }
  TerminalHandover(const TerminalHandover&) = delete;
  TerminalHandover& operator=(const TerminalHandover&) = delete;

  bool handed() const { return own_group_ > 0; }
  void take_back() const {
    if (handed()) hand_terminal_to(own_group_);
  }
  /// After rcoord was continued: the command's group gets the terminal again if rcoord is in
  /// the foreground (`fg`), not if it was continued in the background (`bg`).
  void hand_again() const {
    if (handed() && tcgetpgrp(STDIN_FILENO) == own_group_) hand_terminal_to(child_group_);
  }

 private:
  pid_t child_group_;
  pid_t own_group_ = -1;
};

// What the command's process needs, built before it exists: that process shares rcoord's
// memory until it execs (spawn_command), so it must not allocate or change what rcoord uses.
struct ChildPlan {
  pid_t supervisor = -1;
  /// Where the child names its process group (its pid) for the guard before it execs: the
  /// guard then knows the group before the command can start anything in it, however late
  /// rcoord runs again after the clone (or dies before it names it itself).
  std::atomic<std::int32_t>* guard_group = nullptr;
  int stdin_fd = -1;
  bool take_terminal = false;  ///< the command's group becomes the terminal's foreground
  const char* file = nullptr;  ///< what to exec: the file found for argv[0] (or argv[0])
  std::vector<char*> argv;
  std::vector<std::string> added_env;  ///< "KEY=value" of opts.env
  std::vector<char*> envp;             ///< rcoord's environment with added_env replacing or added
};

ChildPlan plan_child(const SuperviseOptions& opts, pid_t supervisor,
                     std::atomic<std::int32_t>* guard_group, bool take_terminal) {
  ChildPlan plan;
  plan.take_terminal = take_terminal;
  plan.supervisor = supervisor;
  plan.guard_group = guard_group;
  plan.stdin_fd = opts.stdin_fd;
  for (const auto& a : opts.command) plan.argv.push_back(const_cast<char*>(a.c_str()));
  plan.argv.push_back(nullptr);
  // Found before the take (check_executable), so the start after it searches no $PATH.
  const std::string& found = executable_path(opts.command.front());
  plan.file = found.empty() ? plan.argv[0] : found.c_str();
  for (const auto& [key, value] : opts.env) {
    std::string entry = key;
    entry += '=';
    entry += value;
    plan.added_env.push_back(std::move(entry));
  }
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view key = entry.substr(0, entry.find('='));
    bool replaced = std::any_of(opts.env.begin(), opts.env.end(),
                                [key](const auto& added) { return added.first == key; });
    if (!replaced) plan.envp.push_back(*e);
  }
  for (auto& entry : plan.added_env) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  return plan;
}

// The command's process, from clone to exec. Nothing here allocates or writes rcoord's
// memory (only the guard's shared word): rcoord waits, suspended, until this execs or exits.
int run_command(void* arg) {
  const auto& plan = *static_cast<const ChildPlan*>(arg);
  setpgid(0, 0);
  if (plan.guard_group != nullptr) plan.guard_group->store(static_cast<std::int32_t>(getpid()));
  // Before the exec: a command that reads the terminal at once must not find itself in a
  // background group (SIGTTIN would stop it before rcoord could hand the terminal over).
  if (plan.take_terminal) hand_terminal_to(getpid());
  // Dies with rcoord, even by SIGKILL. Set after the clone, so check that rcoord did not die
  // before it was set (we would have been handed to another parent already).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != plan.supervisor) _exit(128 + SIGKILL);
  // This process has its own copy of the signal dispositions (no CLONE_SIGHAND).
  signal(SIGCHLD, SIG_DFL);
  signals::restore_for_child();
  if (plan.stdin_fd >= 0 && plan.stdin_fd != STDIN_FILENO) {
    if (dup2(plan.stdin_fd, STDIN_FILENO) < 0) _exit(126);
    close(plan.stdin_fd);
  }
  execvpe(plan.file, plan.argv.data(), plan.envp.data());
  int err = errno;
  if (plan.file != plan.argv[0] && (err == ENOENT || err == EACCES || err == ENOTDIR)) {
    // The file found before went away or changed since: search again, as execvp would.
    execvpe(plan.argv[0], plan.argv.data(), plan.envp.data());
    err = errno;
  }
  std::array<char, 512> line{};
  int n = std::snprintf(line.data(), line.size(),
                        "rcoord: cannot run '%s': %s (check the command and PATH)\n", plan.argv[0],
                        std::strerror(err));
  if (n > 0) {
    auto length = std::min(static_cast<std::size_t>(n), line.size() - 1);
    if (line[length - 1] != '\n') line[length - 1] = '\n';  // cut short: still one line
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), length);
    (void)ignored;
  }
  _exit(err == ENOENT ? 127 : 126);
}

// The stack the command's process runs on from clone to exec (execvpe's PATH search and its
// fallback to /bin/sh use it). It is mapped once per process and kept, since rcoord is
// suspended while the child runs on it and a consumer's next commands reuse it; it is not
// passed on to the guard (MADV_DONTFORK), so its pages stay rcoord's alone, and its top pages
// are populated now (by the kernel: no access of ours, which a sanitizer would check against
// what an earlier mapping at the same address left): a start after a take pays neither the
// mapping nor their first faults. Returns its top, or nullptr with errno.
char* map_child_stack() {
  constexpr std::size_t kStackBytes = std::size_t{256} * 1024;
  constexpr std::size_t kTouchedBytes = std::size_t{16} * 1024;  // more than clone to exec uses
  void* base = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  madvise(base, kStackBytes, MADV_DONTFORK);
  char* top = static_cast<char*>(base) + kStackBytes;
  // Before Linux 5.14 this fails (EINVAL), and older C library headers lack the name: those
  // pages then fault in at the first start.
#ifdef MADV_POPULATE_WRITE
  madvise(top - kTouchedBytes, kTouchedBytes, MADV_POPULATE_WRITE);
#else
  (void)kTouchedBytes;
#endif
  return top;
}

// What supervising needs of the process (prepare_supervision), and which process it was done
// for: a process forked from one that prepared (tests do) has no subreaper flag and no
// command stack of its own, and prepares again.
struct Prepared {
  pid_t process = 0;
  char* stack_top = nullptr;  ///< map_child_stack()'s; nullptr: mapped again at the start
};

Prepared& prepared() {
  static Prepared state;
  return state;
}

// What supervising needs of the process, done once, before the guard exists: rcoord's own
// signal handling (signals::install, which records the mask the command gets back), SIGCHLD
// blocked, as it is taken with sigtimedwait, and not ignored (an inherited SIG_IGN would reap
// the child behind our back), rcoord a subreaper (members of the command's group whose parent
// dies come to us, not to init: we reap them, and their group is seen to empty), and the
// command's stack. A run form that waits does it before it waits (start_guard), so that
// between the take's answer and the command's start only what needs that answer is done.
void prepare_supervision() {
  Prepared& state = prepared();
  pid_t self = getpid();
  if (state.process == self) return;
  signals::install();
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  signal(SIGCHLD, SIG_DFL);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  state.stack_top = map_child_stack();
  state.process = self;
}

// Starts the command as fork and exec would, without copying rcoord's page tables: the
// process shares rcoord's memory (CLONE_VM) while rcoord waits (CLONE_VFORK) until it execs,
// as posix_spawn does. A fork here made each `lock run` about 0.1 ms slower (its copy, then
// copy-on-write faults in rcoord), on the path from taking the lock to the command running.
// posix_spawn itself cannot set the death signal. The child names its group in
// `guard_group` (ChildPlan). After prepare_supervision(). Returns the pid, or -1 with errno.
pid_t spawn_command(const SuperviseOptions& opts, std::atomic<std::int32_t>* guard_group,
                    bool take_terminal) {
  Prepared& state = prepared();
  ChildPlan plan = plan_child(opts, state.process, guard_group, take_terminal);
  if (state.stack_top == nullptr) state.stack_top = map_child_stack();
  if (state.stack_top == nullptr) return -1;
  return clone(run_command, state.stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
}

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

// The guard: a small process that outlives rcoord to kill the command's whole group if
// rcoord dies (the death signal reaches only the command itself, not what it started), or
// stops: a supervisor stopped (SIGSTOP) or starved of the CPU renews nothing, and its command
// must still be dead before the lease can end. One per rcoord process, started before the
// first command (a consumer's next messages reuse it): a fork of rcoord running serve(), in a
// process group of its own, so that stopping or killing rcoord's group (a shell's job control,
// `kill -STOP -- -PGID`) does not reach it. When it dies anyway, rcoord starts another
// (replace_if_dead), which watches the same group and kill point.
//
// The group to kill (a pid, or 0 when that group is gone; the command's own process names it
// before it execs) and the moment it must be dead by unless renewed (the lease timetable's
// kill point) are in memory the two share; rcoord moves that moment at every renewal. Naming a
// group or moving the moment wakes nobody: a pipe write would wake the guard twice a command, once
// on the path from the command's exit to the give-back, where a two-core machine felt it. The guard
// waits for the end of file on a pipe whose other end only rcoord holds, which means rcoord died,
// and then kills the group named last; and it looks at the shared memory every `check_every` (half
// the shortest time from a take to its stop point, so a command's kill point is seen well before it
// comes) and at the kill point it was shown, killing the group if that point passed unrenewed.
class Guard {
 public:
  /// The process's guard, started on first use; `check_every` counts from the first call.
  /// Throws Error(kServer) when it cannot start.
  static Guard& instance(Millis check_every) {
    static Guard guard(check_every);
    if (guard.write_end_ < 0) {
      throw Error(kServer, fmt::format("cannot start the guard process: {}", guard.failure_),
                  "check the process limits (ulimit -u)");
    }
    return guard;
  }
  /// Before the next command starts: its group must be dead by `kill_by` unless renewed, and
  /// by rcoord's death. Returns the word where the command's process names its group before
  /// it execs (spawn_command); until then there is nothing to kill.
  std::atomic<std::int32_t>* arm(Clock::time_point kill_by) const {
    shared_->kill_by.store(kill_by.time_since_epoch().count());
    return &shared_->group;
  }
  /// A renewal succeeded: the group must be dead by `kill_by` now.
  void extend(Clock::time_point kill_by) const {
    shared_->kill_by.store(kill_by.time_since_epoch().count());
  }
  void unwatch() const {
    shared_->group.store(0);
    shared_->kill_by.store(0);
  }
  /// Whether the guard killed `group` because its kill point passed unrenewed.
  bool struck(pid_t group) const { return shared_->struck.load() == group; }
  /// When it did (steady_clock), if it did.
  std::optional<Clock::time_point> struck_at(pid_t group) const {
    if (!struck(group)) return std::nullopt;
    return Clock::time_point(Clock::duration(shared_->struck_at.load()));
  }
  /// Whether `pid`, a child just reaped, was the guard: then another guard is started at once
  /// (the group it watches stays watched). Throws Error(kServer) when none can be started.
  bool replace_if_dead(pid_t pid) {
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
  /// Before a command starts: a guard that died since the last command (and was not reaped
  /// yet) is replaced.
  void ensure_running() {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) replace_if_dead(pid_);
  }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  struct Shared {
    std::atomic<std::int32_t> group{0};
    std::atomic<std::int64_t> kill_by{0};    ///< steady_clock ns (CLOCK_MONOTONIC); 0: none
    std::atomic<std::int32_t> struck{0};     ///< the last group killed for its kill point
    std::atomic<std::int64_t> struck_at{0};  ///< steady_clock ns of that kill
  };
  static_assert(std::atomic<std::int64_t>::is_always_lock_free &&
                    std::atomic<std::int32_t>::is_always_lock_free,
                "shared between processes: must not need a lock");
  static constexpr std::size_t kSharedBytes = 4096;

  explicit Guard(Millis check_every) : check_every_(std::max(check_every, kShortestCheck)) {
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
  void start() {
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

  // The memory shared with the guard, which the forked guard inherits: MAP_FAILED with errno
  // when it cannot be mapped.
  static void* map_shared() {
    return mmap(nullptr, kSharedBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  }

  // Even a lease with almost no room before its stop point is not looked at more often.
  static constexpr Millis kShortestCheck{10};

  [[noreturn]] static void serve(int read_end, Shared& shared, Millis check_every) {
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

  // Waits up to `wait_ns` for the end of file of the death-notice pipe (a failed read ends
  // the watch too).
  static bool rcoord_died(int read_end, std::int64_t wait_ns) {
    pollfd pipe{read_end, POLLIN, 0};
    timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000),
                static_cast<long>(wait_ns % 1'000'000'000)};
    int ready = ::ppoll(&pipe, 1, &ts, nullptr);
    if (ready <= 0) return false;  // the time is up (or EINTR): look again
    char byte = 0;
    ssize_t n = ::read(read_end, &byte, 1);
    return n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
  }

  Millis check_every_;
  Shared* shared_ = nullptr;
  pid_t pid_ = -1;
  int write_end_ = -1;
  std::string failure_;
};

// The guard armed for one command, for as long as it lives: its kill point set now, its group
// named by the command's own process before it execs.
class Guarded {
 public:
  Guarded(const Guard& guard, Clock::time_point kill_by)
      : guard_(guard), group_(guard.arm(kill_by)) {}
  ~Guarded() { guard_.unwatch(); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;

  /// Where the command's process names its group (spawn_command).
  std::atomic<std::int32_t>* group() const { return group_; }

 private:
  const Guard& guard_;
  std::atomic<std::int32_t>* group_;
};

std::string seconds(Millis d) { return format_duration(d); }

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

// The state of one supervised run: the child and its group, the lease's timetable, and the
// loss handling.
class Supervisor {
 public:
  Supervisor(const SuperviseOptions& opts, Lease& lease, Guard& guard)
      : opts_(opts), lease_(lease), guard_(guard) {
    times_ = {lease.ttl, opts.kill_grace, opts.margin, lease.taken_at + lease.ttl};
    next_renewal_ = times_.next_renewal(lease.taken_at);
  }

  Clock::time_point kill_by() const { return times_.kill_by(); }

  // Whether the lease is already past its stop point: the take's reply was read so late
  // (rcoord stopped by SIGSTOP while it waited, or not scheduled on a starved
  // machine) that the command would start without the time the lease needs to stop it.
  bool too_late_to_start() const { return Clock::now() >= times_.stop_at(); }

  // The take was answered too late to start the command in the lease counted from its send
  // (a slow or lossy network, rcoord stopped or starved while it waited): one renewal, counted
  // from now, gives the command a whole lease, if the lease is still this holder's. Whether
  // it succeeded; when not, not_started() says why.
  bool renew_before_start() {
    auto sent = Clock::now();
    LeaseTimes renewed = times_;
    renewed.renewed(sent);
    try {
      if (!lease_.renew(renewed.stop_at())) {
        late_failure_ = "it is now held by someone else, or expired";
        return false;
      }
    } catch (const Error& e) {
      late_failure_ = e.what();
      return false;
    }
    times_ = renewed;
    next_renewal_ = times_.next_renewal(sent);
    return !too_late_to_start();
  }

  // The result of a command that was never started, its lease being too late for it.
  SuperviseResult not_started() {
    result_.lost = true;
    result_.started = false;
    result_.exit_code = kLost;  // no command status: a consumer's last code says "lost"
    result_.lost_reason = fmt::format(
        "its take was answered too late to run the command in its lease (rcoord stopped or not "
        "scheduled, or a slow network), and renewing it failed: {}",
        late_failure_.empty() ? "its answer came too late again" : late_failure_);
    return result_;
  }

  SuperviseResult run(pid_t child, const TerminalHandover* terminal) {
    child_ = child;
    terminal_ = terminal;
    if (opts_.max_run) max_run_at_ = Clock::now() + *opts_.max_run;
    sigset_t waitset = signals::managed_set();
    sigaddset(&waitset, SIGCHLD);
    for (;;) {
      reap();
      if (child_done_ && (group_gone_ || !group_alive())) break;
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
    if (auto struck_at = guard_.struck_at(child_); struck_at && !result_.lost) {
      // rcoord was stopped or not scheduled past the kill point: the guard did its work.
      result_.lost = true;
      result_.lost_reason = struck_reason(*struck_at);
    }
    return result_;
  }

 private:
  // Collects every child that ended: the command, and (rcoord being a subreaper) members of
  // its group whose parent died before them.
  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG | WUNTRACED);
      if (pid <= 0) return;
      if (WIFSTOPPED(status)) {
        if (pid == child_) follow_stop(WSTOPSIG(status));
        continue;
      }
      if (guard_.replace_if_dead(pid)) continue;
      if (pid == child_ && !child_done_) {
        child_done_ = true;
        result_.exit_code = exit_code_of(status);
        // Checked once here, not again at the loop's top: on the way to the give-back.
        if (group_alive()) {
          stop_stragglers();
        } else {
          // Nothing of the group is left, not even a zombie (one stays a member until
          // reaped): no wait more on the way to the give-back. A child that left the group
          // (setsid) is reaped by the next call, or by init once rcoord exits.
          group_gone_ = true;
          return;
        }
      }
    }
  }

  // The command was stopped by job control (Ctrl-Z, or a read of the terminal from a
  // background group): rcoord stops too, as a shell's job would, so that the shell gets its
  // prompt back and `fg` or `bg` continues both; the terminal comes back to rcoord meanwhile.
  // While stopped it renews nothing: past the kill point its guard (in a group of its own, not
  // stopped) kills the command, and the lease is lost. A stop by SIGSTOP (an operator's, or a
  // debugger's) is not job control: rcoord goes on renewing.
  void follow_stop(int stop_signal) {
    if (stop_signal != SIGTSTP && stop_signal != SIGTTIN && stop_signal != SIGTTOU) return;
    terminal_->take_back();
    signals::stop_self();
    terminal_->hand_again();
    kill(-child_, SIGCONT);
  }

  // Sends `sig` to the command's group; a stopped group is continued, so that it can act on it.
  void signal_group(int sig) const {
    kill(-child_, sig);
    if (sig != SIGKILL) kill(-child_, SIGCONT);
  }

  // kill(2) on a process group succeeds while any member exists (EPERM: one we may not
  // signal, which still exists).
  bool group_alive() const { return kill(-child_, 0) == 0 || errno == EPERM; }

  // The command exited, yet members of its group run on (`job & exit 0`): what is held is
  // given back only once they are gone, so they get SIGTERM, then SIGKILL after the grace.
  void stop_stragglers() {
    result_.stragglers = 1;
    signal_group(result_.lost ? SIGKILL : SIGTERM);
    schedule_kill(Clock::now() + opts_.kill_grace);
  }

  void schedule_kill(Clock::time_point at) { kill_at_ = kill_at_ ? std::min(*kill_at_, at) : at; }

  Clock::time_point next_deadline() const {
    auto next = Clock::time_point::max();
    if (kill_at_) next = std::min(next, *kill_at_);
    if (!result_.lost) next = std::min({next, next_renewal_, times_.stop_at()});
    if (max_run_at_ && !child_done_ && !result_.lost) next = std::min(next, *max_run_at_);
    if (child_done_) next = std::min(next, Clock::now() + kGroupPoll);
    return next;
  }

  void forward(int sig) {
    signals::record(sig);
    // Graceful: the first signal asks rcoord to stop after this child; the next one is for it.
    if (opts_.graceful && ++signals_held_ == 1) return;
    result_.forwarded_signal = sig;
    signal_group(sig);
  }

  void on_deadline() {
    auto now = Clock::now();
    if (kill_at_ && now >= *kill_at_) {
      kill(-child_, SIGKILL);
      kill_at_.reset();
    }
    if (result_.lost) return;  // already being stopped, for a graver reason
    if (max_run_at_ && !child_done_ && now >= *max_run_at_) time_out();
    if (now >= times_.stop_at()) {
      lose(past_stop_point(now), true);
    } else if (now >= next_renewal_) {
      renew();
    }
  }

  // Why the lease is lost when the guard killed the command at `struck_at`.
  std::string struck_reason(Clock::time_point struck_at) const {
    return struck_at < times_.end
               ? "rcoord was stopped or not scheduled past the lease's kill point, and its guard "
                 "killed the command before the lease could end"
               : "rcoord and its guard were stopped or not scheduled past the lease's end: the "
                 "command ran on after it, and another holder may have taken it meanwhile";
  }

  // Why the lease is lost at its stop point, `now` or later: said as the clock says it, never
  // claiming the command was stopped in time when the lease's end had passed.
  std::string past_stop_point(Clock::time_point now) const {
    if (auto struck_at = guard_.struck_at(child_)) return struck_reason(*struck_at);
    if (now >= times_.end) {
      return fmt::format(
          "rcoord was stopped or not scheduled until {} past the lease's end: the command ran on "
          "after it, and another holder may have taken it meanwhile",
          seconds(std::chrono::duration_cast<Millis>(now - times_.end)));
    }
    if (last_failure_.empty()) {
      return "rcoord was stopped or not scheduled past the lease's stop point; the command is "
             "stopped before the lease can end on the server";
    }
    return fmt::format(
        "it could not be renewed in time ({}); the command was stopped before "
        "the lease could end on the server",
        last_failure_);
  }

  void renew() {
    signals::Uninterruptible quiet;  // a signal during renewal is forwarded afterwards
    // Redis starts the new TTL somewhere between our send and its reply: count from the send,
    // so our idea of the lease never outlives the server's.
    auto sent = Clock::now();
    try {
      if (lease_.renew(times_.stop_at())) {
        times_.renewed(sent);
        guard_.extend(times_.kill_by());
        next_renewal_ = times_.next_renewal(sent);
        last_failure_.clear();
      } else {
        lose("it is now held by someone else or was deleted", false);
      }
    } catch (const Error& e) {
      if (e.code() != kConnection) {
        lose(fmt::format("renewal failed: {}", e.what()), false);
        return;
      }
      // Redis unreachable: keep trying until the stop point.
      last_failure_ = e.what();
      auto retry = std::clamp<Clock::duration>(lease_.ttl / 10, Millis(50), Millis(1000));
      next_renewal_ = std::min(Clock::now() + retry, times_.stop_at());
    }
  }

  // The command ran past --max-run: it is stopped as on a loss (SIGTERM, SIGKILL after the
  // grace), but the lease is still ours and goes on being renewed until the group is gone.
  void time_out() {
    max_run_at_.reset();
    result_.timed_out = true;
    signal_group(SIGTERM);
    schedule_kill(Clock::now() + opts_.kill_grace);
  }

  // The lease is lost (`unreachable`: it cannot be renewed in time, and ends at times_.end).
  void lose(std::string reason, bool unreachable) {
    result_.lost = true;
    result_.lost_reason = std::move(reason);
    if (child_done_) {
      kill(-child_, SIGKILL);  // only stragglers are left: nothing of the group runs unheld
      return;
    }
    signal_group(SIGTERM);
    auto kill_at = Clock::now() + opts_.kill_grace;
    if (unreachable) kill_at = std::min(kill_at, times_.kill_by());
    schedule_kill(kill_at);
  }

  const SuperviseOptions& opts_;
  Lease& lease_;
  Guard& guard_;
  const TerminalHandover* terminal_ = nullptr;  ///< set by run()
  LeaseTimes times_;
  pid_t child_ = -1;
  bool child_done_ = false;
  bool group_gone_ = false;  ///< seen empty when the command was reaped
  Clock::time_point next_renewal_;
  std::optional<Clock::time_point> kill_at_;
  std::optional<Clock::time_point> max_run_at_;  ///< --max-run's end, until it has struck
  std::string last_failure_;
  std::string late_failure_;  ///< why renew_before_start() failed
  int signals_held_ = 0;
  SuperviseResult result_;
};

}  // namespace

// What a renewal needs to outlast lost packets: on an established connection a lost segment
// is sent again after Linux's minimum RTO of 200 ms, doubling each time, so 1.5 s outlasts
// three losses of the request or its reply in a row (0.2 + 0.4 + 0.8 s).
constexpr Millis kRetransmitRoom{1'500};

Clock::time_point LeaseTimes::next_renewal(Clock::time_point sent) const {
  auto window = stop_at() - sent;
  // The room left between the renewal and the stop point: half the window, or when that is
  // short, up to kRetransmitRoom of it (never more than two thirds, so renewals stay apart).
  Clock::duration room = std::max<Clock::duration>(
      window / 2, std::min<Clock::duration>(kRetransmitRoom, window * 2 / 3));
  return sent + std::max<Clock::duration>(std::min<Clock::duration>(ttl / 3, window - room),
                                          Clock::duration::zero());
}

Millis default_kill_grace(Millis ttl) { return std::min(Millis(10'000), ttl / 3); }

Millis run_margin(Millis timeout, bool timeout_given, Millis ttl) {
  return timeout_given ? timeout : std::min(timeout, ttl / 4);
}

Millis fit_kill_grace(std::optional<Millis> given, Millis ttl, Millis margin,
                      std::string_view ttl_option) {
  // The default shrinks with a short lease: at most half of what the margin leaves.
  Millis grace = given.value_or(std::min(default_kill_grace(ttl), (ttl - margin) / 2));
  if (grace > Millis(0) && grace + margin < ttl) return grace;
  if (given && margin < ttl) {
    throw Error(kUsage,
                fmt::format("--kill-grace {} does not fit {} {}: the command must be dead one "
                            "--timeout ({}) before the lease can end",
                            seconds(grace), ttl_option, seconds(ttl), seconds(margin)),
                fmt::format("give a --kill-grace shorter than {}, a longer {}, or a shorter "
                            "--timeout; without --kill-grace the grace fits the lease",
                            seconds(ttl - margin), ttl_option));
  }
  throw Error(kUsage,
              fmt::format("{} {} is too short for --timeout {}: the command must be stopped and "
                          "dead one --timeout before the lease can end",
                          ttl_option, seconds(ttl), seconds(margin)),
              fmt::format("give a {} longer than {}, or a shorter --timeout; without --timeout "
                          "the timeout fits the lease",
                          ttl_option, seconds(margin + std::max(grace, Millis(1)))));
}

Millis guard_check_every(Millis ttl, Millis kill_grace, Millis margin) {
  return std::max(Millis(0), ttl - kill_grace - margin) / 2;
}

void start_guard(Millis check_every) {
  prepare_supervision();
  Guard::instance(check_every);
}

SuperviseResult supervise(const SuperviseOptions& opts, Lease& lease) {
  if (opts.command.empty()) {
    throw Error(kUsage, "no command to run", "put the command after --, e.g. -- ./backup.sh");
  }
  prepare_supervision();
  // First: the command inherits nothing of it.
  Guard& guard = Guard::instance(guard_check_every(lease.ttl, opts.kill_grace, opts.margin));
  guard.ensure_running();
  Supervisor supervisor(opts, lease, guard);
  if (supervisor.too_late_to_start() && !supervisor.renew_before_start()) {
    return supervisor.not_started();
  }
  // What rcoord wrote before (a consumer's line for the message before) comes out before
  // what the command writes to the same stream.
  std::fflush(nullptr);
  Guarded guarded(guard, supervisor.kill_by());
  bool take_terminal = !opts.graceful && terminal_is_ours();
  pid_t child = spawn_command(opts, guarded.group(), take_terminal);
  if (child < 0) {
    throw Error(kServer, fmt::format("cannot start the command: {}", std::strerror(errno)),
                "check the process limits (ulimit -u)");
  }
  setpgid(child, child);  // both sides set it, so neither races the other
  TerminalHandover terminal(child, take_terminal);
  return supervisor.run(child, &terminal);
}

}  // namespace rcoord
