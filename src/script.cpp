#include "script.hpp"

#include <fmt/format.h>

#include "errors.hpp"

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

bool is_noscript(const Reply& r) {
  return r->type == REDIS_REPLY_ERROR &&
         std::string_view(r->str, r->len).substr(0, 8) == "NOSCRIPT";
}

}  // namespace

Reply eval(Connection& conn, const Script& script, const Args& keys, const Args& args) {
  Reply r = conn.command_raw(eval_args("EVALSHA", script.sha1, keys, args));
  // The script cache is empty after a restart or SCRIPT FLUSH: send the body once.
  if (is_noscript(r)) r = conn.command_raw(eval_args("EVAL", script.body, keys, args));
  check_reply(r, fmt::format("script {}", script.name));
  if (script.writes) conn.await_replicas();
  return r;
}

Reply eval_taking(Connection& conn, const Script& script, const Args& keys, const Args& args,
                  const std::function<void()>& give_back) {
  try {
    return eval(conn, script, keys, args);
  } catch (const ReplicaShortfall&) {
    int wanted = conn.wait_replicas();
    conn.set_wait_replicas(0);
    try {
      give_back();
    } catch (const Error&) {
      // Best effort: the lease still ends by its TTL.
    }
    conn.set_wait_replicas(wanted);
    throw;
  }
}

}  // namespace rcoord
