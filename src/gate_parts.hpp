#pragma once
/// What gate.cpp (records, release, extend, status, lease) and gate_take.cpp (taking a gate:
/// one script on one server, the ordered take on a Cluster) share about a gate's parts.

#include <cstdint>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "history.hpp"
#include "keys.hpp"
#include "limit.hpp"

namespace rcoord::gate {

struct Part;  // gate.hpp

/// The parameters of a rate part's one slot (GCRA, burst = N, cost 1). Throws Error(kUsage)
/// for a rate the limit scripts cannot take.
limit::Params rate_params(const Part& part);

/// Gives back (or withdraws from the waiters of) one lock or semaphore part; rates: nothing.
/// True when the token held it.
bool give_back_part(Connection& conn, const Keys& keys, const Part& part, std::string_view token,
                    const Ending& ending);

/// gate_record's ARGV: the TTL, then `n` and each part.
Args record_args(const std::vector<Part>& parts, Millis ttl);

/// Counts `outcome` ("acquired", "busy" or "lost") of a take of `ordered` in its counters
/// (gate_count.lua), where no gate_take script did: the ordered take of a Cluster, a part
/// found lost. `busy_since` is the server time (ms) of the call's first refusal, 0 for none.
/// Returns the server time in ms. Throws Error as Connection::command does.
std::int64_t count_take(Connection& conn, const Keys& keys, const std::vector<Part>& ordered,
                        std::string_view outcome, std::int64_t busy_since);

}  // namespace rcoord::gate
