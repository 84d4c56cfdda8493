#include "spawn.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "executable.hpp"
#include "signals.hpp"

namespace rcoord {

// A background group calling tcsetpgrp gets SIGTTOU unless it blocks it.
void hand_terminal_to(pid_t group) {
  sigset_t ttou;
  sigset_t old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  sigprocmask(SIG_BLOCK, &ttou, &old);
  tcsetpgrp(STDIN_FILENO, group);
  sigprocmask(SIG_SETMASK, &old, nullptr);
}

bool terminal_is_ours() {
  return isatty(STDIN_FILENO) != 0 && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

namespace {

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
  std::vector<std::string> added_env;  ///< "KEY=value" of the added variables
  std::vector<char*> envp;             ///< rcoord's environment with added_env replacing or added
};

ChildPlan plan_child(const CommandSpec& opts, pid_t supervisor,
                     std::atomic<std::int32_t>* guard_group, bool take_terminal) {
  ChildPlan plan;
  plan.take_terminal = take_terminal;
  plan.supervisor = supervisor;
  plan.guard_group = guard_group;
  plan.stdin_fd = opts.stdin_fd;
  for (const auto& a : opts.argv) plan.argv.push_back(const_cast<char*>(a.c_str()));
  plan.argv.push_back(nullptr);
  // Found before the take (check_executable), so the start after it searches no $PATH.
  const std::string& found = executable_path(opts.argv.front());
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

}  // namespace

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
pid_t spawn_command(const CommandSpec& command, std::atomic<std::int32_t>* guard_group,
                    bool take_terminal) {
  Prepared& state = prepared();
  ChildPlan plan = plan_child(command, state.process, guard_group, take_terminal);
  if (state.stack_top == nullptr) state.stack_top = map_child_stack();
  if (state.stack_top == nullptr) return -1;
  return clone(run_command, state.stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
}

}  // namespace rcoord
