#include "supervise.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "errors.hpp"
#include "guard.hpp"
#include "loss_watch.hpp"
#include "signals.hpp"
#include "spawn.hpp"
#include "wakeups.hpp"

namespace rcoord {
namespace {

using Clock = std::chrono::steady_clock;

// While the command has exited and members of its group still run, the group is looked at
// this often (their deaths are not ours to be told about: their parent may be another member).
constexpr Millis kGroupPoll{20};

std::string seconds(Millis d) { return format_duration(d); }

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// The signals the supervisor waits for: those it forwards, and its children's ends.
sigset_t supervised_signals() {
  sigset_t set = signals::managed_set();
  sigaddset(&set, SIGCHLD);
  return set;
}

// The loss watch starts once the command has run this long: a command done sooner (a cron
// job with nothing to do) never pays for its connection and round trips, nor holds the lock.
constexpr Millis kWatchAfter{50};

// How soon after a check that a watched key's change caused the next one may come, at the
// soonest: where other clients change the same key often (a semaphore's other holders
// renewing), this keeps those checks to a few per TTL; a change after a quiet spell is
// checked at once.
Millis check_gap(Millis ttl) { return std::clamp(ttl / 60, Millis(10), Millis(500)); }

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

  SuperviseResult run(pid_t child, const TerminalHandover* terminal, Wakeups& wakeups) {
    child_ = child;
    terminal_ = terminal;
    if (opts_.max_run) max_run_at_ = Clock::now() + *opts_.max_run;
    if (!lease_.watched.empty()) watch_at_ = Clock::now() + kWatchAfter;
    for (;;) {
      reap();
      if (child_done_ && (group_gone_ || !group_alive())) break;
      Wakeups::Woken woken = wakeups.wait(next_deadline(), watch_fds());
      if (woken.signal == SIGCHLD) continue;  // reap() at the top of the loop
      if (woken.signal > 0) {
        forward(woken.signal);
      } else if (woken.input) {
        on_watch_input();
      } else {
        on_deadline();
      }
    }
    if (auto struck_at = guard_.struck_at(child_); struck_at && !result_.lost) {
      // rcoord was stopped or not scheduled past the kill point: the guard did its work.
      result_.lost = true;
      result_.lost_reason = struck_reason(*struck_at);
    }
    return result_;
  }

 private:
  // Asks the server to tell of changes to the lease's keys (kWatchAfter the command started),
  // waiting for it no later than whatever comes next (a renewal, --max-run).
  void watch_for_loss() {
    for (const auto& watched : lease_.watched) {
      auto deadline = std::min(next_deadline(), Clock::now() + watched.conn->timeout());
      if (auto watch = LossWatch::start(watched, deadline)) watches_.push_back(std::move(watch));
    }
  }

  std::vector<int> watch_fds() const {
    std::vector<int> fds;
    for (const auto& watch : watches_) fds.push_back(watch->fd());
    return fds;
  }

  // A watched key changed (or a watch's connection failed): the lease is checked by a renewal
  // now, or check_gap() after the last check a change caused.
  void on_watch_input() {
    bool changed = false;
    for (auto& watch : watches_) changed = watch->changed() || changed;
    if (!changed || result_.lost) return;
    auto check_at = Clock::now();
    if (last_watch_check_)
      check_at = std::max(check_at, *last_watch_check_ + check_gap(lease_.ttl));
    last_watch_check_ = check_at;
    next_renewal_ = std::min(next_renewal_, check_at);
  }

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
    if (watch_at_) next = std::min(next, *watch_at_);
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
    if (watch_at_ && now >= *watch_at_) {
      watch_at_.reset();
      if (!child_done_ && !result_.lost) watch_for_loss();
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
  std::optional<Clock::time_point> watch_at_;          ///< when the loss watch starts, until it has
  std::optional<Clock::time_point> last_watch_check_;  ///< of the last check a change caused
  std::vector<std::unique_ptr<LossWatch>> watches_;
  std::optional<Clock::time_point> kill_at_;
  std::optional<Clock::time_point> max_run_at_;  ///< --max-run's end, until it has struck
  std::string last_failure_;
  std::string late_failure_;  ///< why renew_before_start() failed
  int signals_held_ = 0;
  SuperviseResult result_;
};

}  // namespace

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
  Wakeups wakeups(supervised_signals());  // before the command starts: it may fail
  Guarded guarded(guard, supervisor.kill_by());
  bool take_terminal = !opts.graceful && terminal_is_ours();
  pid_t child =
      spawn_command({opts.command, opts.env, opts.stdin_fd}, guarded.group(), take_terminal);
  if (child < 0) {
    throw Error(kServer, fmt::format("cannot start the command: {}", std::strerror(errno)),
                "check the process limits (ulimit -u)");
  }
  setpgid(child, child);  // both sides set it, so neither races the other
  TerminalHandover terminal(child, take_terminal);
  if (opts.on_started) opts.on_started();
  return supervisor.run(child, &terminal, wakeups);
}

}  // namespace rcoord
