#pragma once
/// The objects rcoord keeps, found with SCAN (never KEYS), each with its state: what `ls`
/// lists, `top` shows and `metrics` exports. One pass walks each master once; the states of
/// the objects a SCAN page finds are read in pipelined batches (one round trip per batch,
/// a second one for the types that need it), so a large keyspace is read without a round
/// trip per object and without a long command that would block the server.

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "inventory_object.hpp"
#include "keys.hpp"

namespace rcoord::inventory {

/// The object types `ls --type` accepts.
const std::vector<std::string>& types();

struct Query {
  std::string pattern = "*";  ///< glob of object names
  std::string type;           ///< "" any
  bool states = true;         ///< false: names only, no state read (`ls --names`)
  /// With states: the take counters of locks, semaphores and elections too (`metrics`).
  bool contention = false;
};

/// What one pass reached.
struct Pass {
  std::size_t found = 0;    ///< objects reported
  std::size_t masters = 0;  ///< cluster masters walked or tried; 0 when not a cluster
  /// The cluster masters that could not be reached, each as its error message: their
  /// objects are missing from the pass.
  std::vector<std::string> unreachable;
};

/// The connections a survey makes to a cluster's masters, kept by a caller that surveys again
/// and again (`top`): each refresh then reuses them, where it would connect to every master
/// anew (with TLS, a handshake each) and leave as many closed connections behind.
class Nodes {
 public:
  /// The connection to the node of `endpoint` (its host and port, or its socket), made on
  /// first use; one whose socket failed reconnects on its next command.
  Connection& to(const Endpoint& endpoint, Millis timeout);

 private:
  std::deque<Connection> conns_;  ///< a deque: references stay valid as it grows
};

/// Calls `each` for every object whose name matches the query, as SCAN finds them (a cursor
/// walk: the server is never blocked, and an object changed during the walk may be missed or
/// seen as it is then). On a cluster every master is walked; one that cannot be reached is
/// listed in Pass::unreachable and the others are still read. An object whose keys hold
/// something else is reported unreadable, not thrown. Throws Error(kUsage) for an unknown
/// type, Error(kConnection) when the server (a standalone one, or the cluster's seed) cannot
/// be reached. With `nodes`, the masters' connections are taken from it and left there.
/// `each` may keep the object it is handed (move from it): the pass is done with it.
Pass survey(Connection& conn, const Keys& keys, const Query& query,
            const std::function<void(Object&)>& each, Nodes* nodes = nullptr);

/// `ls`: as survey(), then, when masters were missed, Error(kConnection) naming them (the
/// objects of the others were reported). Returns how many objects were found.
std::size_t list(Connection& conn, const Keys& keys, const Query& query,
                 const std::function<void(const Object&)>& each);

/// The Error (kConnection) for a pass that missed masters ("N of M cluster masters were not
/// <verb>: ..."); call only when it did.
Error unreachable_error(const Pass& pass, std::string_view verb = "listed");

}  // namespace rcoord::inventory
