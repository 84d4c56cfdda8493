#pragma once
/// Lua scripts embedded at build time, run with EVALSHA and an EVAL fallback.

#include <string_view>

#include "connection.hpp"

namespace rcoord {

/// One embedded script. `sha1` is the SHA1 of `body`, computed at build time.
struct Script {
  std::string_view name;
  std::string_view body;
  std::string_view sha1;
};

/// Runs `script` with EVALSHA (one round trip when the server has it cached), falling back
/// to EVAL on NOSCRIPT. Error replies throw Error(kServer) naming the script.
Reply eval(Connection& conn, const Script& script, const Args& keys, const Args& args);

}  // namespace rcoord
