#include "hold.hpp"

namespace rcoord::cmd {

void give_back_quietly(Context& ctx, const Holding& held) {
  signals::Uninterruptible quiet;
  ReplicaWaitSuspended no_wait(ctx.conn());
  DeadlineCap bounded(ctx.conn(), std::chrono::steady_clock::now() + ctx.settings().timeout);
  try {
    held.give_back();
  } catch (const Error& e) {
    Printer::warn(fmt::format("rcoord: could not give back {}: {} (it expires by its TTL)",
                              held.what, e.what()));
  }
}

Millis run_kill_grace(const Context& ctx, std::optional<Millis> given, Millis lease,
                      std::string_view lease_option) {
  return fit_kill_grace(given, lease, ctx.settings().timeout, lease_option);
}

void add_max_run_option(CLI::App* verb, std::optional<Millis>& max_run, const std::string& help) {
  add_duration(verb, "--max-run", max_run, help, positive("30m"));
}

void warn_timed_out(const SuperviseOptions& opts, std::string_view what_next) {
  Printer::warn(fmt::format(
      "rcoord: the command ran longer than --max-run {}: its process group got SIGTERM (and "
      "SIGKILL if still running {} later); {}",
      format_duration(opts.max_run.value_or(Millis(0))), format_duration(opts.kill_grace),
      what_next));
}

int run_supervised(Context& ctx, const Holding& held, const SuperviseOptions& opts, Lease& lease) {
  SuperviseResult result = supervise(opts, lease);
  if (result.lost) {
    Printer::warn(
        fmt::format("rcoord: {} was lost while the command ran: {} (the command was "
                    "terminated)",
                    held.what, result.lost_reason));
    give_back_quietly(ctx, held);  // exact by token: harmless if someone else holds it now
    return kLost;
  }
  if (result.timed_out) {
    warn_timed_out(opts, fmt::format("{} {}", held.what, held.after_run));
    return kTimedOut;
  }
  return result.exit_code;
}

}  // namespace rcoord::cmd
