#pragma once
/// Termination signals (SIGINT, SIGTERM, SIGHUP) turned into values instead of sudden death.
///
/// After install(), those signals are blocked. Blocking socket waits use ppoll() with
/// wait_mask(), which unblocks them only for the duration of the wait, so a Ctrl-C while
/// rcoord waits for a lock interrupts the wait at once, with no race between checking the
/// flag and sleeping. A supervisor collects them synchronously with sigtimedwait().

#include <chrono>
#include <csignal>

namespace rcoord::signals {

/// Installs the recording handlers and blocks the signals. Idempotent. A signal that was
/// ignored when rcoord started (nohup, a background job of a script) stays ignored, for
/// rcoord and for the children it runs.
void install();

/// Ignores SIGPIPE for rcoord itself, so that a write to a reader that went away fails with
/// EPIPE (and a take is given back) instead of killing it. Children get it back as it was.
void ignore_sigpipe();

/// Gives a freshly forked child the dispositions and mask rcoord was started with.
void restore_for_child();

/// The terminating signal received so far, or 0.
int pending();

/// Records a signal taken synchronously (sigtimedwait), so pending() reports it.
void record(int signo);

/// Sleeps until `deadline` on the monotonic clock. False when a managed signal ended it
/// early (only once install() ran; before that, signals act as usual).
bool sleep_until(std::chrono::steady_clock::time_point deadline);

/// The mask to pass to ppoll(): unblocks the signals while interruptible, else keeps them
/// blocked. nullptr before install() (the current mask stays).
const sigset_t* wait_mask();

/// The signals install() manages: SIGINT, SIGTERM, SIGHUP, less those ignored on entry.
sigset_t managed_set();

/// The signal mask the process had before install(): what a child must get back before exec.
const sigset_t& original_mask();

/// While alive (around a take that may wait), Ctrl-Z (SIGTSTP) ends a wait as a managed
/// signal does, with pending() == SIGTSTP, instead of freezing rcoord with its wait and its
/// take still queued on the server (where the take would run, handing the lock to a stopped
/// process). The caller gives back what the take may have taken, then stop_now(). SIGINT,
/// SIGTERM and SIGHUP win over it. Does nothing when SIGTSTP was ignored or blocked on entry,
/// or before install().
class StopsWaiting {
 public:
  StopsWaiting();
  ~StopsWaiting();
  StopsWaiting(const StopsWaiting&) = delete;
  StopsWaiting& operator=(const StopsWaiting&) = delete;

  /// A Ctrl-Z came (and no terminating signal): the wait must stop. Also takes one that is
  /// still pending, blocked, so that the end of this scope does not stop rcoord holding what
  /// it took.
  bool asked() const;
  /// Stops rcoord as Ctrl-Z would, and returns once it is continued (fg, bg, SIGCONT), the
  /// request cleared. In an orphaned process group, where the system does not stop on
  /// SIGTSTP, it returns at once.
  void stop_now() const;

 private:
  bool active_ = false;
  struct sigaction previous_ {};
};

/// Stops the process as Ctrl-Z would (SIGTSTP with its default action), whatever rcoord's own
/// handling of SIGTSTP, and returns once it is continued (fg, bg, SIGCONT). In an orphaned
/// process group, where the system does not stop on SIGTSTP, it returns at once.
void stop_self();

/// While alive, socket waits are not interrupted by the managed signals (they stay pending).
/// Used around work that must finish: releasing a lock, renewing it while a child runs.
class Uninterruptible {
 public:
  Uninterruptible();
  ~Uninterruptible();
  Uninterruptible(const Uninterruptible&) = delete;
  Uninterruptible& operator=(const Uninterruptible&) = delete;

 private:
  bool previous_;
};

}  // namespace rcoord::signals
