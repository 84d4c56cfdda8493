#pragma once
/// Waiting for something to be free without taking it (`lock wait`, `sem wait`, SPEC §6
/// "waits that take nothing"). The watcher looks once (a script that also enters it among the
/// object's watchers), then sleeps in BLPOP on its own wake list, which the give-back that
/// frees the object pushes to: the same release that wakes the takers, on a list of its own,
/// so that a taker's wake-up is never spent on a watcher. The sleep ends early only to renew
/// the watcher's place (a heartbeat) or when the holder's lease runs out.

#include <functional>
#include <optional>
#include <string>

#include "connection.hpp"
#include "duration.hpp"

namespace rcoord::watching {

/// How often a watcher renews its place among the watchers (it stays three times as long).
inline constexpr Millis kHeartbeat{1000};

/// What one look found.
struct Look {
  bool free = false;
  Millis holder_left = Millis::max();  ///< until the holders' leases end, when not free
};

/// Looks with `look` (its argument: how long the watcher stays among the watchers without
/// looking again; 0 leaves them), then waits up to `wait` (nullopt: look once; Millis::max():
/// forever) for a wake-up on `wake_key`. True when it was free, or freed while waiting; false
/// when the wait ran out. Throws Error(kConnection/kServer), Error(kInterrupted) on a signal.
bool wait_until_free(Connection& conn, const std::string& wake_key, std::optional<Millis> wait,
                     const std::function<Look(Millis life)>& look);

}  // namespace rcoord::watching
