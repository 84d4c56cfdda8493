#pragma once
/// Lua scripts embedded at build time, run with EVALSHA and an EVAL fallback.

#include <functional>
#include <string_view>

#include "connection.hpp"

namespace rcoord {

/// One embedded script. `sha1` is the SHA1 of `body`, computed at build time. A script
/// whose body starts with `#!lua flags=no-writes` is read-only (the server enforces it).
struct Script {
  std::string_view name;
  std::string_view body;
  std::string_view sha1;
  bool writes = true;
};

/// Runs `script` with EVALSHA (one round trip when the server has it cached), falling back
/// to EVAL on NOSCRIPT. Error replies throw Error(kServer) naming the script. A writing
/// script then waits for the replicas --wait-replicas asks for (ReplicaShortfall).
Reply eval(Connection& conn, const Script& script, const Args& keys, const Args& args);

/// As eval(), for a script that takes something (a lock, a permit, leadership). When the
/// replicas do not acknowledge it in time, `give_back` runs (without waiting for replicas,
/// errors ignored) before the ReplicaShortfall goes on: a caller never believes it holds
/// what a failover could lose. When the reply is lost after the request went out (a
/// timeout, a dropped connection), `give_back` runs on a fresh connection within one timeout
/// before the Error(kConnection) goes on, its hint saying whether the server confirmed it.
Reply eval_taking(Connection& conn, const Script& script, const Args& keys, const Args& args,
                  const std::function<void()>& give_back);

}  // namespace rcoord
