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
  return result.exit_code;
}

}  // namespace rcoord::cmd
