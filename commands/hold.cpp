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

Millis run_kill_grace(const Context& ctx, const std::string& given, Millis lease,
                      std::string_view lease_option) {
  std::optional<Millis> grace;
  if (!given.empty()) grace = duration_or_throw("--kill-grace", given);
  return fit_kill_grace(grace, lease, ctx.settings().timeout, lease_option);
}

std::optional<Millis> max_run_option(const std::string& given) {
  if (given.empty()) return std::nullopt;
  Millis max_run = duration_or_throw("--max-run", given);
  if (max_run <= Millis(0)) {
    throw Error(kUsage, fmt::format("bad --max-run '{}': it must be longer than 0", given),
                "give the longest the command may run, e.g. --max-run 30m, or leave it out for no "
                "limit");
  }
  return max_run;
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
