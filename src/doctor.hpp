#pragma once
/// `rcoord doctor`: what about the server makes coordination unsafe, and how to fix it.

#include <string>
#include <vector>

#include "connection.hpp"
#include "keys.hpp"

namespace rcoord::doctor {

struct Finding {
  std::string check;   ///< server | eviction | persistence | replication | cluster | permissions
  bool ok = true;      ///< false: unsafe for coordination
  std::string detail;  ///< what was found
  std::string fix;     ///< what to do (empty when ok)
};

/// Runs every check. A check that cannot run (e.g. CONFIG is not permitted) is reported as
/// not ok with the reason, never skipped silently. Throws Error(kConnection) when the server
/// cannot be reached at all.
std::vector<Finding> examine(Connection& conn, const Keys& keys);

}  // namespace rcoord::doctor
