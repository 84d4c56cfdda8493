#include "connection.hpp"

#include <utility>

namespace rcoord {

Reply Connection::command_raw(const Args& args) {
  auto replies = pipeline({args});
  return std::move(replies.front());
}

Reply Connection::command(const Args& args) {
  Reply r = command_raw(args);
  check_reply(r, args.empty() ? std::string_view{} : std::string_view(args[0]));
  return r;
}

Reply Connection::command_blocking(const Args& args, Millis block) {
  Reply r = std::move(routed({args}, block).front());
  // BLPOP/BLMOVE block on the key after the command: a wake list of an rcoord object.
  check_key_reply(r, args[0], args.size() > 1 ? std::string_view(args[1]) : std::string_view{});
  return r;
}

std::vector<Reply> Connection::pipeline(const std::vector<Args>& commands) {
  return routed(commands, Millis(0));
}

std::vector<Reply> Connection::pipeline_each(const std::vector<Args>& commands) {
  std::vector<Reply> replies = pipeline(commands);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (cluster::is_redirect(replies[i].get())) replies[i] = command_raw(commands[i]);
  }
  return replies;
}

std::vector<Reply> Connection::routed(const std::vector<Args>& commands, Millis extra) {
  asked_.reset();
  auto out = cluster::send_routed(session_, commands, extra);
  asked_ = std::move(out.asked);
  return std::move(out.replies);
}

void Connection::send_formatted(std::string_view resp) {
  asked_.reset();  // these writes go to this node, whatever served the last command
  session_.send_formatted(resp);
}

namespace {

// How many replicas a write to `at` waits for: `asked` (--wait-replicas), or with auto the
// replicas online when the write was made, as ROLE sent with it said (else asked now).
int replicas_to_await(Session& at, int asked) {
  if (asked != kWaitReplicasAuto) return asked;
  auto learnt = at.take_replica_count();
  return learnt ? *learnt : at.count_replicas();
}

}  // namespace

void Connection::await_replicas() {
  if (wait_replicas_ == 0) return;
  if (asked_) {
    // The write went to the node of an ASK redirect: its replicas are the ones to wait for.
    Session there = std::move(*asked_);
    asked_.reset();
    if (int n = replicas_to_await(there, wait_replicas_); n > 0) rcoord::await_replicas(there, n);
    return;
  }
  if (int n = replicas_to_await(session_, wait_replicas_); n > 0) {
    rcoord::await_replicas(session_, n);
  }
}

}  // namespace rcoord
