#include "signals.hpp"

#include <atomic>

namespace rcoord::signals {
namespace {

volatile std::sig_atomic_t g_pending = 0;
bool g_installed = false;
bool g_interruptible = true;
sigset_t g_original_mask;
sigset_t g_unblocked_mask;  // the original mask minus our signals: used inside ppoll
sigset_t g_blocked_mask;    // the original mask plus our signals

constexpr int kManaged[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void record_signal(int signo) { g_pending = signo; }

}  // namespace

sigset_t managed_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kManaged) sigaddset(&set, s);
  return set;
}

void install() {
  if (g_installed) return;
  sigset_t set = managed_set();
  sigprocmask(SIG_BLOCK, &set, &g_original_mask);
  g_blocked_mask = g_original_mask;
  g_unblocked_mask = g_original_mask;
  for (int s : kManaged) {
    sigaddset(&g_blocked_mask, s);
    sigdelset(&g_unblocked_mask, s);
    struct sigaction sa {};
    sa.sa_handler = record_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: the wait must return EINTR
    sigaction(s, &sa, nullptr);
  }
  g_installed = true;
}

int pending() { return g_pending; }

void record(int signo) { g_pending = signo; }

const sigset_t* wait_mask() {
  if (!g_installed) return nullptr;
  return g_interruptible ? &g_unblocked_mask : &g_blocked_mask;
}

const sigset_t& original_mask() {
  if (!g_installed) sigprocmask(SIG_SETMASK, nullptr, &g_original_mask);
  return g_original_mask;
}

Uninterruptible::Uninterruptible() : previous_(g_interruptible) { g_interruptible = false; }
Uninterruptible::~Uninterruptible() { g_interruptible = previous_; }

}  // namespace rcoord::signals
