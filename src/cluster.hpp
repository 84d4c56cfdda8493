#pragma once
/// Redis Cluster facts: key slots, and the list of a cluster's masters. Following the
/// redirects of a node that does not serve a slot is redirect.hpp's job.

#include <optional>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "url.hpp"

namespace rcoord::cluster {

constexpr int kSlots = 16384;

/// The slot of `key` (CRC16 of the hash tag if the key has a non-empty `{...}`, else of
/// the whole key), as CLUSTER KEYSLOT computes it.
int key_slot(std::string_view key);

/// The masters of the cluster `conn` is connected to (from CLUSTER NODES, failed ones
/// included, so that a check can report them), each with the settings of `conn`; nullopt
/// when the server is not in cluster mode (or this user may not run CLUSTER NODES).
std::optional<std::vector<Endpoint>> masters(Connection& conn);

}  // namespace rcoord::cluster
