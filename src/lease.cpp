#include "lease.hpp"

#include <utility>

namespace rcoord {

Lease connection_lease(Connection& conn, Millis ttl, Lease::Clock::time_point taken_at,
                       std::function<bool()> renew,
                       std::function<bool(const Ending& ending)> give_back,
                       std::function<void(const Ending& ending, Millis rest)> keep) {
  Lease lease{ttl, taken_at, nullptr, nullptr, nullptr, {}};
  lease.renew = [&conn, renew = std::move(renew)](Lease::Clock::time_point deadline) {
    DeadlineCap bounded(conn, deadline);
    return renew();
  };
  lease.give_back = [&conn, give_back = std::move(give_back)](const Ending& ending,
                                                              Lease::Clock::time_point deadline) {
    ReplicaWaitSuspended no_wait(conn);
    DeadlineCap bounded(conn, deadline);
    return give_back(ending);
  };
  if (keep) {
    lease.keep = [&conn, keep = std::move(keep)](const Ending& ending, Millis rest,
                                                 Lease::Clock::time_point deadline) {
      ReplicaWaitSuspended no_wait(conn);
      DeadlineCap bounded(conn, deadline);
      keep(ending, rest);
    };
  }
  return lease;
}

}  // namespace rcoord
