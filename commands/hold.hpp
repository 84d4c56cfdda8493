#pragma once
/// The wiring every `run` verb shares (lock run, sem run, elect run): take something while
/// Ctrl-C can still abort cleanly, then run the command while holding it (run_holding in
/// src/holding.hpp) and say on stderr what became of it.

#include <fmt/format.h>

#include <functional>
#include <string>

#include "context.hpp"
#include "errors.hpp"
#include "holding.hpp"
#include "signals.hpp"

namespace rcoord::cmd {

/// What a verb is taking, for messages and for clean-up when the take is cut short.
struct Holding {
  std::string what;                 ///< "lock 'backup'", for messages
  std::function<void()> give_back;  ///< exact (token-based) and harmless when not held
};

/// Calls give_back with signals held off, within one --timeout; a failure is only a warning
/// (the TTL frees it).
void give_back_quietly(Context& ctx, const Holding& held);

/// Prints the result of a take. When stdout cannot take it (OutputError), what was newly
/// taken is given back first: a token nobody saw must not stay held. A refresh (`newly_taken`
/// false: the caller's token held it before the call) stays held, as it was before.
template <typename T>
void emit_taken(Context& ctx, const Holding& held, const T& result, bool newly_taken = true) {
  try {
    ctx.out().emit(result);
  } catch (const OutputError&) {
    if (newly_taken) give_back_quietly(ctx, held);
    throw;
  }
}

/// The room between SIGKILL and the end of a `run` form's `lease`: the --timeout, shrunk to
/// fit a short lease unless it was given (supervise.hpp, run_margin).
Millis run_margin(const Context& ctx, Millis lease);

/// The --kill-grace of a `run` form: `given` (nullopt: the default for the lease), checked to
/// fit in `lease` with run_margin (SPEC §6 "short leases", supervise.hpp). Throws Error(kUsage).
Millis run_kill_grace(const Context& ctx, std::optional<Millis> given, Millis lease,
                      std::string_view lease_option = "--ttl");

/// Adds `--max-run DUR` (positive; nullopt when not given) to a `run` form or `queue consume`.
void add_max_run_option(CLI::App* verb, std::optional<Millis>& max_run, const std::string& help);

/// What a `run` form does when what it runs under is taken (busy, full, led by another), as
/// flock does: exit with --conflict-exit-code (-E), and when one is given, say nothing on
/// stderr unless --verbose (a cron job that gives -E 0 mails nobody about a skipped run).
struct Conflict {
  int exit_code = kNo;
  bool exit_code_given = false;
  bool verbose = false;
  /// Whether the line that says why goes to stderr.
  bool say() const { return !exit_code_given || verbose; }
};

/// Adds -E/--conflict-exit-code and --verbose to a `run` form; `when` completes the help of
/// -E ("the lock is busy").
void add_conflict_options(CLI::App* verb, Conflict& conflict, const std::string& when);

/// Says on stderr that the command outlived --max-run (killed `kill_grace` after SIGTERM if
/// still running) and was stopped.
void warn_timed_out(Millis max_run, Millis kill_grace, std::string_view what_next);

/// Starts the guard a `run` form's command needs (supervise.hpp) before the take when the
/// take may wait (`wait`: the verb's --wait; nullopt or 0: try once): its fork then happens
/// while waiting. A try once leaves it to supervise(), after the take: a try that finds the
/// lock busy, as all but one of the hosts running the same cron job do, forks nothing.
/// `lease` and `kill_grace`: the TTL the supervisor counts and the run's --kill-grace, from
/// which the guard knows how often to look (supervise.hpp, guard_check_every).
void start_guard_if_waiting(const Context& ctx, std::optional<Millis> wait, Millis lease,
                            Millis kill_grace);

/// Runs `take` (which may wait) so that SIGINT/SIGTERM/SIGHUP interrupt the wait at once.
/// If a signal arrives while waiting, or just as `take` returns, whatever the interrupted
/// request may have taken is given back and Error(kInterrupted) is thrown: nothing is held.
/// Ctrl-Z (SIGTSTP) gives it back the same way, stops rcoord, and takes again from the start
/// once rcoord is continued (a --wait counts again from there): a stopped waiter is out of
/// the queue, and the lock goes to the next one.
template <typename Take>
auto take_or_abort(Context& ctx, const Holding& held, Take&& take) -> decltype(take()) {
  signals::install();
  signals::StopsWaiting stops;
  for (;;) {
    try {
      auto result = take();
      if (signals::pending() == 0 && !stops.asked()) return result;
    } catch (const Error& e) {
      if (e.code() != kInterrupted) throw;
    }
    give_back_quietly(ctx, held);
    if (!stops.asked()) {
      throw Error(kInterrupted, fmt::format("interrupted while waiting for {}", held.what),
                  "nothing is held");
    }
    stops.stop_now();
  }
}

/// Under systemd ($NOTIFY_SOCKET, notify.hpp), sends `describe()` as a STATUS= line (a run
/// form about to wait: "waiting for lock 'x', held by …"); outside it, does nothing and does
/// not call `describe` (which may cost a round trip).
void notify_waiting(const std::function<std::string()>& describe);

/// Runs `opts.supervise.command` while holding `lease` (run_holding), with one --timeout for
/// the margin and the give-back, telling systemd READY=1, WATCHDOG=1 and STOPPING=1 when it
/// runs under it (notify.hpp). Returns the command's exit code, kLost (with a warning) when
/// `what` was lost while it ran, or kTimedOut (with a warning) when it ran past --max-run and
/// was stopped; a give-back that fails is a warning too.
int run_supervised(Context& ctx, std::string_view what, Lease& lease, HoldingOptions opts);

}  // namespace rcoord::cmd
