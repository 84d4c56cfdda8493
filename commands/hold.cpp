#include "hold.hpp"

namespace rcoord::cmd {

void give_back_quietly(Context& ctx, const Holding& held) {
  signals::Uninterruptible quiet;
  ReplicaWaitSuspended no_wait(ctx.conn());
  try {
    held.give_back();
  } catch (const Error& e) {
    Printer::warn(fmt::format("rcoord: could not give back {}: {} (it expires by its TTL)",
                              held.what, e.what()));
  }
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
