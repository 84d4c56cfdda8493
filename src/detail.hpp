#pragma once
/// What `top` shows of one chosen object beside its row: the status its type's status verb
/// reads, and its latest history events. Read here, printed by the command layer.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "bloom.hpp"
#include "connection.hpp"
#include "elect.hpp"
#include "gate.hpp"
#include "history.hpp"
#include "keys.hpp"
#include "latch.hpp"
#include "limit.hpp"
#include "lock.hpp"
#include "queue.hpp"
#include "semaphore.hpp"

namespace rcoord::inventory {

/// The status of one object, as its type's status verb reads it; monostate for the types
/// that have none (pf, complete, recent, signal) and for a limit whose state keeps no
/// parameters to peek with.
using Status =
    std::variant<std::monostate, lock::Status, semaphore::Status, elect::Status, queue::Stats,
                 bloom::Info, latch::Status, limit::Decision, gate::Status>;

struct Detail {
  Status status;
  std::vector<history::Event> events;  ///< the latest first, as `rcoord history` reads them
};

/// Reads the status of the object `name` of `type` and (for the types that keep a history:
/// lock, sem, elect, queue) its latest `events` events. Throws as the status verbs do:
/// Error(kServer) for keys that hold something else, Error(kConnection) for a lost server.
Detail read_detail(Connection& conn, const Keys& keys, const std::string& type,
                   const std::string& name, std::int64_t events);

}  // namespace rcoord::inventory
