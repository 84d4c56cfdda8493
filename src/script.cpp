#include "script.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "errors.hpp"
#include "signals.hpp"

namespace rcoord {
namespace {

Args eval_args(std::string_view verb, std::string_view what, const Args& keys, const Args& args) {
  Args out;
  out.reserve(3 + keys.size() + args.size());
  out.emplace_back(verb);
  out.emplace_back(what);
  out.push_back(std::to_string(keys.size()));
  out.insert(out.end(), keys.begin(), keys.end());
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

// The command on line `line` of a script body (`redis.call('HSET', ...)`), or "".
std::string command_on_line(std::string_view body, long line) {
  for (long n = 1; n < line && !body.empty(); ++n) {
    auto nl = body.find('\n');
    body = nl == std::string_view::npos ? std::string_view{} : body.substr(nl + 1);
  }
  body = body.substr(0, body.find('\n'));
  auto call = body.find("call('");
  if (call == std::string_view::npos) return {};
  body.remove_prefix(call + 6);
  return std::string(body.substr(0, body.find('\'')));
}

// Redis refuses a command inside a script with a message that names only the script line
// (`... can't run this command or subcommand script: <sha>, on @user_script:26.`): name the
// command from the embedded body instead, so the operator knows what to grant.
void check_script_reply(const Reply& r, const Script& script) {
  if (r->type == REDIS_REPLY_ERROR) {
    std::string_view msg(r->str, r->len);
    auto at = msg.find("@user_script:");
    if (msg.find("can't run this command") != std::string_view::npos &&
        at != std::string_view::npos) {
      long line = std::strtol(std::string(msg.substr(at + 13)).c_str(), nullptr, 10);
      std::string command = command_on_line(script.body, line);
      if (!command.empty()) {
        throw Error(
            kServer,
            fmt::format("script {} refused by ACL: this user may not run {}", script.name, command),
            "grant the rcoord ACL rule to this user (see the README)");
      }
    }
  }
  check_reply(r, fmt::format("script {}", script.name));
}

// The reply to a take was lost after its request went out: the server may have run it, or
// may still run it if it is only slow. Gives back by token on a fresh connection, within one
// timeout, so that an exit 3 means nothing is held. True when the server confirmed it.
// (A server that is only slow runs the take first: its request came in on the older
// connection, so it is read first when the server goes on.)
bool give_back_after_lost_reply(Connection& conn, const std::function<void()>& give_back) {
  signals::Uninterruptible quiet;
  ReplicaWaitSuspended no_wait(conn);
  DeadlineCap cap(conn, std::chrono::steady_clock::now() + conn.timeout());
  conn.close();
  try {
    give_back();
    return true;
  } catch (const Error&) {
    return false;
  }
}

bool is_noscript(const Reply& r) {
  return r->type == REDIS_REPLY_ERROR &&
         std::string_view(r->str, r->len).substr(0, 8) == "NOSCRIPT";
}

}  // namespace

Reply eval(Connection& conn, const Script& script, const Args& keys, const Args& args) {
  Reply r = conn.command_raw(eval_args("EVALSHA", script.sha1, keys, args));
  // The script cache is empty after a restart or SCRIPT FLUSH: send the body once.
  if (is_noscript(r)) r = conn.command_raw(eval_args("EVAL", script.body, keys, args));
  check_script_reply(r, script);
  if (script.writes) conn.await_replicas();
  return r;
}

Reply eval_taking(Connection& conn, const Script& script, const Args& keys, const Args& args,
                  const std::function<void()>& give_back) {
  try {
    return eval(conn, script, keys, args);
  } catch (const ReplicaShortfall&) {
    ReplicaWaitSuspended no_wait(conn);
    try {
      give_back();
    } catch (const Error&) {
      // Best effort: the lease still ends by its TTL.
    }
    throw;
  } catch (const Error& e) {
    if (e.code() != kConnection || !conn.request_sent()) throw;
    bool confirmed = give_back_after_lost_reply(conn, give_back);
    throw Error(kConnection, e.what(),
                fmt::format("{}; {}", e.hint(),
                            confirmed ? "nothing is held: what it may have taken was given back"
                                      : "what it may have taken was given back on a new "
                                        "connection, unconfirmed (else its TTL ends it)"));
  }
}

}  // namespace rcoord
