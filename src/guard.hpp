#pragma once
/// The guard of a `run` form: a small process that outlives rcoord to kill the command's
/// whole group if rcoord dies (the death signal reaches only the command itself, not what it
/// started), or stops: a supervisor stopped (SIGSTOP) or starved of the CPU renews nothing,
/// and its command must still be dead before the lease can end. One per rcoord process,
/// started before the first command (a consumer's next messages reuse it): a fork of rcoord
/// in a process group of its own, so that stopping or killing rcoord's group (a shell's job
/// control, `kill -STOP -- -PGID`) does not reach it. When it dies anyway, rcoord starts
/// another (replace_if_dead), which watches the same group and kill point.
///
/// The group to kill (a pid, or 0 when that group is gone; the command's own process names it
/// before it execs) and the moment it must be dead by unless renewed (the lease timetable's
/// kill point) are in memory the two share; rcoord moves that moment at every renewal. Naming
/// a group or moving the moment wakes nobody: a pipe write would wake the guard twice a
/// command, once on the path from the command's exit to the give-back. The guard waits for the
/// end of file on a pipe whose other end only rcoord holds, which means rcoord died, and then
/// kills the group named last; and it looks at the shared memory every `check_every` (half the
/// shortest time from a take to its stop point, so a command's kill point is seen well before
/// it comes) and at the kill point it was shown, killing the group if that point passed
/// unrenewed.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "duration.hpp"

namespace rcoord {

class Guard {
 public:
  using Clock = std::chrono::steady_clock;

  /// The process's guard, started on first use; `check_every` counts from the first call.
  /// Throws Error(kServer) when it cannot start.
  static Guard& instance(Millis check_every);
  /// Before the next command starts: its group must be dead by `kill_by` unless renewed, and
  /// by rcoord's death. Returns the word where the command's process names its group before
  /// it execs (spawn_command); until then there is nothing to kill.
  std::atomic<std::int32_t>* arm(Clock::time_point kill_by) const;
  /// A renewal succeeded: the group must be dead by `kill_by` now.
  void extend(Clock::time_point kill_by) const;
  void unwatch() const;
  /// Whether the guard killed `group` because its kill point passed unrenewed.
  bool struck(pid_t group) const;
  /// When it did (steady_clock), if it did.
  std::optional<Clock::time_point> struck_at(pid_t group) const;
  /// Whether `pid`, a child just reaped, was the guard: then another guard is started at once
  /// (the group it watches stays watched). Throws Error(kServer) when none can be started.
  bool replace_if_dead(pid_t pid);
  /// Before a command starts: a guard that died since the last command (and was not reaped
  /// yet) is replaced.
  void ensure_running();
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

  explicit Guard(Millis check_every);
  void start();
  [[noreturn]] static void serve(int read_end, Shared& shared, Millis check_every);

  Millis check_every_;
  Shared* shared_ = nullptr;
  pid_t pid_ = -1;
  int write_end_ = -1;
  std::string failure_;
};

/// The guard armed for one command, for as long as it lives: its kill point set now, its group
/// named by the command's own process before it execs.
class Guarded {
 public:
  Guarded(const Guard& guard, Guard::Clock::time_point kill_by)
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

}  // namespace rcoord
