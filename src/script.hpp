#pragma once
/// Lua scripts embedded at build time, run with EVALSHA and an EVAL fallback.

#include <chrono>
#include <functional>
#include <string_view>
#include <vector>

#include "connection.hpp"

namespace rcoord {

/// One embedded script. `sha1` is the SHA1 of `body`, computed at build time. A script whose
/// file starts with `-- @no-writes` only reads (cmake/EmbedLua.cmake): it does not wait for
/// replicas.
struct Script {
  std::string_view name;
  std::string_view body;
  std::string_view sha1;
  bool writes = true;
};

/// Runs `script` with EVALSHA (one round trip when the server has it cached), falling back
/// to EVAL on NOSCRIPT. Error replies throw script_error(). A writing script then waits for
/// the replicas --wait-replicas asks for (ReplicaShortfall).
Reply eval(Connection& conn, const Script& script, const Args& keys, const Args& args);

/// The Error for the error reply `msg` of `script` run on `keys`, in rcoord's one-line form:
/// a key the script refused (src/lua/lib/prelude.lua: `WRONGTYPE KEYS[i] holds ...`) is
/// named with its object (foreign_key_error()), a command refused by ACL is named from the
/// script's body, and no message shows the script's SHA1 or a line of it.
Error script_error(std::string_view msg, const Script& script, const Args& keys);

/// Whether the error reply `msg` refused a command by ACL: NOPERM, or a command a script
/// called: "The user executing the script can't run this command or subcommand" (Redis 6.2,
/// 7.0), "ACL failure in script: User U has no permissions to run the 'C' command" (Redis 7.2
/// on, Valkey).
bool refused_by_acl(std::string_view msg);

/// `msg` without what Redis adds to an error raised inside a script: `user_script:N: ` before
/// a Lua error, ` script: <sha1>, on @user_script:N.` after any.
std::string script_error_text(std::string_view msg);

/// A script that takes something (a lock, a permit, leadership), with its keys and
/// arguments, what gives it back, and how to tell a reply that took.
struct Take {
  const Script& script;
  const Args& keys;
  const Args& args;
  std::function<void()> give_back;
  std::function<bool(const redisReply*)> took;
};

/// As eval(), for `take`'s script. When the replicas do not acknowledge it in time,
/// `take.give_back` runs (without waiting for replicas, errors ignored) before the
/// ReplicaShortfall goes on: a caller never believes it holds what a failover could lose.
/// When the reply is lost after the request went out (a timeout, a dropped connection),
/// `give_back` runs on a fresh connection within one timeout before the Error(kConnection)
/// goes on, its hint saying whether the server confirmed it. A managed signal that cuts the
/// reply short gives back likewise before Error(kInterrupted) goes on.
Reply eval_taking(Connection& conn, const Take& take);

/// A waiter's next try after its wait (BLPOP `wake_key` for up to `block`). When the wait is at
/// most a quarter of `lease`, the lease the try grants, the try is sent behind the wait in one
/// write: the server runs it as soon as the wait ends, without a round trip back to the
/// waiter, and the lease counts from the sending of both. A shorter lease waits, then tries.
/// The wait's own error (its key of another type, a refused BLPOP) is thrown after giving back
/// what the try may have taken, as eval_taking() does for the try's. `sent` is set to when a
/// lease the try grants counts from.
Reply retry_after_wait(Connection& conn, const Take& take, const std::string& wake_key,
                       Millis block, Millis lease, std::chrono::steady_clock::time_point& sent);

/// One command of a pipeline of reads: a plain command, or a script called by EVALSHA (and
/// sent once more as EVAL when the server does not have the script cached).
struct Call {
  Args args;                       ///< the command; for a script, its EVALSHA form
  const Script* script = nullptr;  ///< the script called; nullptr for a plain command
};

/// The EVALSHA call of `script` on `keys` with `args`, for send_calls().
Call script_call(const Script& script, const Args& keys, const Args& args);

/// Sends `calls` in one write, then reads their replies, in order, error replies in place.
/// Redirects are not followed (the caller knows the keys are on this node, e.g. found there
/// by SCAN; a MOVED or ASK reply comes back as it is). Calls answered NOSCRIPT are sent once
/// more as EVAL. Writing scripts do not wait for --wait-replicas here: this is for reading
/// many objects' state at once. Throws Error(kConnection) for I/O failures.
std::vector<Reply> send_calls(Connection& conn, const std::vector<Call>& calls);

/// As send_calls(), following cluster redirects as Connection::pipeline() does (so `conn`
/// may move to another node for good).
std::vector<Reply> send_calls_routed(Connection& conn, const std::vector<Call>& calls);

/// The Error an error reply to `call` stands for: script_error() for a script call,
/// reply_error() for a plain command.
Error call_error(const redisReply* reply, const Call& call);

}  // namespace rcoord
