#include "hold.hpp"

#include "notify.hpp"

namespace rcoord::cmd {
namespace {

void warn_not_given_back(std::string_view what, std::string_view error) {
  Printer::warn(
      fmt::format("rcoord: could not give back {}: {} (it expires by its TTL)", what, error));
}

// Under systemd (notify.hpp): READY=1 once the command runs, WATCHDOG=1 after each renewal
// when a watchdog is set, STOPPING=1 as the give-back (or the keep) begins. Wraps the calls
// of `lease` and the start hook of `opts`; nothing changes outside systemd.
void notify_service_manager(std::string_view what, Lease& lease, HoldingOptions& opts) {
  if (!notify::active()) return;
  std::string running =
      notify::status(fmt::format("holding {}, running {}", what, opts.supervise.command.front()));
  opts.supervise.on_started = [running] { notify::send("READY=1\n" + running); };
  if (notify::watchdog_wanted()) {
    lease.renew = [renew = std::move(lease.renew)](Lease::Clock::time_point deadline) {
      bool ours = renew(deadline);
      if (ours) notify::send("WATCHDOG=1");
      return ours;
    };
  }
  std::string stopping = "STOPPING=1\n" + notify::status(fmt::format("giving back {}", what));
  if (lease.give_back) {
    lease.give_back = [give_back = std::move(lease.give_back), stopping](
                          const Ending& ending, Lease::Clock::time_point deadline) {
      notify::send(stopping);
      return give_back(ending, deadline);
    };
  }
  if (lease.keep) {
    lease.keep = [keep = std::move(lease.keep), stopping](const Ending& ending, Millis rest,
                                                          Lease::Clock::time_point deadline) {
      notify::send(stopping);
      keep(ending, rest, deadline);
    };
  }
}

}  // namespace

void notify_waiting(const std::function<std::string()>& describe) {
  if (notify::active()) notify::send(notify::status(describe()));
}

void give_back_quietly(Context& ctx, const Holding& held) {
  signals::Uninterruptible quiet;
  ReplicaWaitSuspended no_wait(ctx.conn());
  DeadlineCap bounded(ctx.conn(), std::chrono::steady_clock::now() + ctx.settings().timeout);
  try {
    held.give_back();
  } catch (const Error& e) {
    warn_not_given_back(held.what, e.what());
  }
}

Millis run_margin(const Context& ctx, Millis lease) {
  return rcoord::run_margin(ctx.settings().timeout, ctx.settings().timeout_given, lease);
}

Millis run_kill_grace(const Context& ctx, std::optional<Millis> given, Millis lease,
                      std::string_view lease_option) {
  return fit_kill_grace(given, lease, run_margin(ctx, lease), lease_option);
}

void start_guard_if_waiting(const Context& ctx, std::optional<Millis> wait, Millis lease,
                            Millis kill_grace) {
  if (wait && *wait > Millis(0)) {
    start_guard(guard_check_every(lease, kill_grace, run_margin(ctx, lease)));
  }
}

void add_max_run_option(CLI::App* verb, std::optional<Millis>& max_run, const std::string& help) {
  add_duration(verb, "--max-run", max_run, help, positive("30m"));
}

void add_conflict_options(CLI::App* verb, Conflict& conflict, const std::string& when) {
  verb->add_option_function<int>(
          "-E,--conflict-exit-code",
          [&conflict](int code) {
            conflict.exit_code = code;
            conflict.exit_code_given = true;
          },
          "Exit code when " + when +
              " (default 1); with -E, nothing is said on stderr then, "
              "unless --verbose")
      ->type_name("CODE")
      ->transform(decimal_in(0, 255));
  verb->add_flag("--verbose", conflict.verbose,
                 "Say on stderr why the command did not run, even with -E, and when it starts");
}

void warn_timed_out(Millis max_run, Millis kill_grace, std::string_view what_next) {
  Printer::warn(fmt::format(
      "rcoord: the command ran longer than --max-run {}: its process group got SIGTERM (and "
      "SIGKILL if still running {} later); {}",
      format_duration(max_run), format_duration(kill_grace), what_next));
}

int run_supervised(Context& ctx, std::string_view what, Lease& lease, HoldingOptions opts) {
  opts.supervise.margin = run_margin(ctx, lease.ttl);
  opts.give_back_timeout = ctx.settings().timeout;
  notify_service_manager(what, lease, opts);
  std::string after_run = opts.min_hold > Millis(0)
                              ? "is kept until --min-hold has passed since it was taken"
                              : "is given back";
  return run_holding(lease, opts, [&](const HoldEvent& e) {
    switch (e.kind) {
      case HoldEvent::Kind::kLost:
        Printer::warn(
            fmt::format("rcoord: {} was lost while the command ran: {} (the command was "
                        "terminated)",
                        what, e.detail));
        return;
      case HoldEvent::Kind::kLostUnstarted:
        Printer::warn(fmt::format(
            "rcoord: {} was lost before the command could start: {} (the command was not "
            "started)",
            what, e.detail));
        return;
      case HoldEvent::Kind::kTimedOut:
        warn_timed_out(opts.supervise.max_run.value_or(Millis(0)), opts.supervise.kill_grace,
                       fmt::format("{} {}", what, after_run));
        return;
      case HoldEvent::Kind::kGiveBackFailed:
        warn_not_given_back(what, e.detail);
        return;
    }
  });
}

}  // namespace rcoord::cmd
