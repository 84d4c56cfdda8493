#pragma once
/// `rcoord ls`: the objects rcoord keeps, found with SCAN (never KEYS), each with its type
/// and a one-line state.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "keys.hpp"

namespace rcoord::inventory {

struct Object {
  std::string type;  ///< lock | sem | limit | bloom | pf | complete | recent | elect | queue |
                     ///< signal | latch
  std::string name;
  std::string state;  ///< one line, e.g. "held by 3f9d57ad… for 12.3s, fence 7"
  /// Until an object given --expire ends (bloom, pf, complete, recent); -1: it does not.
  std::int64_t expires_in_ms = -1;
};

/// The object types `ls --type` accepts.
const std::vector<std::string>& types();

/// Calls `each` for every object whose name matches the glob `pattern` ("*": all) and whose
/// type is `type` ("": any), as SCAN finds them (a cursor walk: the server is never blocked,
/// and an object changed during the walk may be missed or seen as it is then). Returns how
/// many were found. Throws Error(kUsage) for an unknown type.
std::size_t list(Connection& conn, const Keys& keys, std::string_view pattern,
                 std::string_view type, const std::function<void(const Object&)>& each);

}  // namespace rcoord::inventory
