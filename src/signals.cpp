#include "signals.hpp"

#include <poll.h>

#include <atomic>
#include <cerrno>

namespace rcoord::signals {
namespace {

volatile std::sig_atomic_t g_pending = 0;
bool g_installed = false;
bool g_interruptible = true;
sigset_t g_original_mask;
sigset_t g_unblocked_mask;  // the original mask minus our signals: used inside ppoll
sigset_t g_blocked_mask;    // the original mask plus our signals
sigset_t g_ignored = [] {   // managed signals that were ignored on entry
  sigset_t set;
  sigemptyset(&set);
  return set;
}();

constexpr int kManaged[] = {SIGINT, SIGTERM, SIGHUP};
bool g_sigpipe_changed = false;
bool g_sigpipe_was_ignored = false;

extern "C" void record_signal(int signo) { g_pending = signo; }

// A terminating signal already recorded is not replaced by a request to stop.
extern "C" void record_stop(int signo) {
  if (g_pending == 0) g_pending = signo;
}

// Runs `handler` on `signo`, without SA_RESTART: the wait it interrupts must return EINTR.
void handle(int signo, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(signo, &sa, nullptr);
}

sigset_t only(int signo) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  return set;
}

}  // namespace

sigset_t managed_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kManaged) {
    // Linux keeps a blocked signal pending even when it is ignored: leave those alone.
    if (sigismember(&g_ignored, s) != 1) sigaddset(&set, s);
  }
  return set;
}

void install() {
  if (g_installed) return;
  for (int s : kManaged) {
    struct sigaction current {};
    sigaction(s, nullptr, &current);
    if (current.sa_handler == SIG_IGN) sigaddset(&g_ignored, s);
  }
  sigset_t set = managed_set();
  sigprocmask(SIG_BLOCK, &set, &g_original_mask);
  g_blocked_mask = g_original_mask;
  g_unblocked_mask = g_original_mask;
  for (int s : kManaged) {
    if (sigismember(&set, s) != 1) continue;
    sigaddset(&g_blocked_mask, s);
    sigdelset(&g_unblocked_mask, s);
    handle(s, record_signal);
  }
  g_installed = true;
}

int pending() { return g_pending; }

bool sleep_until(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    timespec ts{static_cast<time_t>(left.count() / 1'000'000'000),
                static_cast<long>(left.count() % 1'000'000'000)};
    int n = ppoll(nullptr, 0, &ts, wait_mask());
    if (n < 0 && errno == EINTR && wait_mask() != nullptr && pending() != 0) return false;
  }
}

void ignore_sigpipe() {
  struct sigaction current {};
  sigaction(SIGPIPE, nullptr, &current);
  g_sigpipe_was_ignored = current.sa_handler == SIG_IGN;
  signal(SIGPIPE, SIG_IGN);
  g_sigpipe_changed = true;
}

void restore_for_child() {
  if (g_sigpipe_changed) signal(SIGPIPE, g_sigpipe_was_ignored ? SIG_IGN : SIG_DFL);
  for (int s : kManaged) {
    bool ignored = g_installed && sigismember(&g_ignored, s) == 1;
    signal(s, ignored ? SIG_IGN : SIG_DFL);
  }
  sigprocmask(SIG_SETMASK, &original_mask(), nullptr);
}

void record(int signo) { g_pending = signo; }

const sigset_t* wait_mask() {
  if (!g_installed) return nullptr;
  return g_interruptible ? &g_unblocked_mask : &g_blocked_mask;
}

const sigset_t& original_mask() {
  if (!g_installed) sigprocmask(SIG_SETMASK, nullptr, &g_original_mask);
  return g_original_mask;
}

StopsWaiting::StopsWaiting() {
  if (!g_installed || sigismember(&g_original_mask, SIGTSTP) == 1) return;
  sigaction(SIGTSTP, nullptr, &previous_);
  if (previous_.sa_handler != SIG_DFL) return;  // ignored, or handled by someone else
  sigset_t tstp = only(SIGTSTP);
  sigprocmask(SIG_BLOCK, &tstp, nullptr);
  // Unblocked only inside interruptible waits (g_unblocked_mask has it unblocked already).
  sigaddset(&g_blocked_mask, SIGTSTP);
  handle(SIGTSTP, record_stop);
  active_ = true;
}

StopsWaiting::~StopsWaiting() {
  if (!active_) return;
  if (g_pending == SIGTSTP) g_pending = 0;
  sigaction(SIGTSTP, &previous_, nullptr);
  sigdelset(&g_blocked_mask, SIGTSTP);
  sigset_t tstp = only(SIGTSTP);
  // One that came after the last look is dropped: rcoord then holds what it took, or is on its
  // way out, and must not stop there (a Ctrl-Z once the command runs reaches the command).
  timespec now{0, 0};
  while (sigtimedwait(&tstp, nullptr, &now) == SIGTSTP) {
  }
  sigprocmask(SIG_UNBLOCK, &tstp, nullptr);
}

bool StopsWaiting::asked() const {
  if (!active_) return false;
  if (g_pending == 0) {
    // Sent while blocked, outside a wait: take it now rather than stop at the scope's end.
    sigset_t waiting;
    sigpending(&waiting);
    if (sigismember(&waiting, SIGTSTP) == 1) {
      sigset_t tstp = only(SIGTSTP);
      timespec now{0, 0};
      if (sigtimedwait(&tstp, nullptr, &now) == SIGTSTP) g_pending = SIGTSTP;
    }
  }
  return g_pending == SIGTSTP;
}

void StopsWaiting::stop_now() const {
  if (!active_) return;
  g_pending = 0;
  stop_self();
}

void stop_self() {
  struct sigaction mine {};
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGTSTP, &dfl, &mine);
  sigset_t tstp = only(SIGTSTP);
  sigset_t before;
  sigprocmask(SIG_BLOCK, &tstp, &before);
  raise(SIGTSTP);  // pending while blocked; unblocking it stops the process here
  sigprocmask(SIG_UNBLOCK, &tstp, nullptr);
  sigprocmask(SIG_SETMASK, &before, nullptr);  // continued
  sigaction(SIGTSTP, &mine, nullptr);
}

Uninterruptible::Uninterruptible() : previous_(g_interruptible) { g_interruptible = false; }
Uninterruptible::~Uninterruptible() { g_interruptible = previous_; }

}  // namespace rcoord::signals
