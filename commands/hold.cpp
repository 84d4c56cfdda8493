#include "hold.hpp"

namespace rcoord::cmd {
namespace {

void warn_not_given_back(std::string_view what, std::string_view error) {
  Printer::warn(
      fmt::format("rcoord: could not give back {}: {} (it expires by its TTL)", what, error));
}

}  // namespace

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
