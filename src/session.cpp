#include "session.hpp"

#include <fmt/format.h>

#include <utility>

#include "errors.hpp"
#include "signals.hpp"

namespace rcoord {

Session::Session(Endpoint endpoint, Millis timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout) {}

void Session::move_to(Endpoint endpoint) {
  close();
  endpoint_ = std::move(endpoint);
}

Deadline Session::within(Millis wait) const {
  auto now = Clock::now();
  bool cut = cap_ <= now || wait >= std::chrono::duration_cast<Millis>(cap_ - now);
  auto at = cut ? cap_ : now + wait;
  return {at, timeout_, at == cap_ && cap_ != Clock::time_point::max()};
}

bool Session::handshake(const Deadline& deadline) {
  std::vector<Args> hello;
  if (endpoint_.password) {
    if (endpoint_.user.empty()) {
      hello.push_back({"AUTH", *endpoint_.password});
    } else {
      hello.push_back({"AUTH", endpoint_.user, *endpoint_.password});
    }
  }
  if (endpoint_.db != 0) hello.push_back({"SELECT", std::to_string(endpoint_.db)});
  // Right after a failover a sentinel may still name the old master, now a replica.
  bool check_role = !endpoint_.sentinel.sentinels.empty();
  if (check_role) hello.push_back({"ROLE"});
  // With a handshake to make anyway the name goes with it; else with the first command.
  name_reply_owed_ = false;
  role_reply_owed_ = false;
  replicas_.reset();
  name_pending_ = !endpoint_.client_name.empty();
  if (name_pending_ && !hello.empty()) {
    hello.push_back({"CLIENT", "SETNAME", endpoint_.client_name});
    name_pending_ = false;
  }
  if (hello.empty()) return true;
  std::string out;
  for (const auto& cmd : hello) append_command(out, cmd);
  transport_.write_all(out, deadline);
  bool is_master = true;
  for (const auto& cmd : hello) {
    Reply r = transport_.read_reply(deadline);
    if (cmd[0] == "ROLE") {
      // A user without ROLE permission gets an error: trust the sentinel then.
      is_master = r->type != REDIS_REPLY_ARRAY || r->elements == 0 ||
                  reply_string(r->element[0]) == "master";
      continue;
    }
    if (r->type != REDIS_REPLY_ERROR || cmd[0] == "CLIENT") continue;
    std::string msg(r->str, r->len);
    if (cmd[0] == "AUTH") {
      std::string who =
          endpoint_.user.empty() ? "the default user" : "user '" + endpoint_.user + "'";
      transport_.fail(
          fmt::format("authentication failed for {} at {}: {}", who, endpoint_.describe(), msg),
          kAuthHint);
    }
    close();
    throw Error(
        kServer,
        fmt::format("cannot select db {} on {}: {}", endpoint_.db, endpoint_.describe(), msg),
        "use a db index the server has (see 'databases' in redis.conf)");
  }
  return is_master;
}

void Session::ensure_connected() {
  if (connected()) return;
  auto deadline = within(timeout_);
  bool via_sentinel = !endpoint_.sentinel.sentinels.empty();
  for (;;) {
    if (via_sentinel) find_master(deadline);
    transport_.connect(endpoint_, deadline);
    if (handshake(deadline)) return;
    // The sentinels have not caught up with a failover yet: ask again shortly.
    std::string former = endpoint_.describe();
    close();
    if (Clock::now() + Millis(100) >= deadline.at) {
      throw Error(kConnection,
                  fmt::format("the sentinels name {} as master '{}', but it is a replica", former,
                              endpoint_.sentinel.master),
                  "a failover may be under way; try again, or raise --timeout");
    }
    if (!signals::sleep_until(Clock::now() + Millis(100))) {
      throw Error(kInterrupted, fmt::format("interrupted by signal {}", signals::pending()));
    }
  }
}

void Session::find_master(const Deadline& deadline) {
  const auto& sentinel = endpoint_.sentinel;
  std::string tried;
  for (const auto& address : sentinel.sentinels) {
    Endpoint at = sentinel_endpoint(endpoint_, address);
    auto left = std::chrono::duration_cast<Millis>(deadline.at - Clock::now());
    if (left.count() <= 0) break;
    try {
      Session asking(at, left);
      Reply r = std::move(
          asking.exchange({{"SENTINEL", "get-master-addr-by-name", sentinel.master}}, Millis(0))
              .front());
      check_reply(r, "SENTINEL");
      if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
        endpoint_.host = reply_string(r->element[0]);
        endpoint_.port = static_cast<int>(reply_integer(r->element[1]));
        return;
      }
      tried += fmt::format("{}{} does not know master '{}'", tried.empty() ? "" : "; ",
                           at.describe(), sentinel.master);
    } catch (const Error& e) {
      tried += fmt::format("{}{}", tried.empty() ? "" : "; ", e.what());
    }
  }
  throw Error(kConnection,
              fmt::format("no sentinel gave the address of master '{}': {}", sentinel.master,
                          tried.empty() ? "timed out" : tried),
              "check --sentinel and --sentinel-master");
}

namespace {

// The replicas online at a master, from its ROLE reply (`master`, offset, one entry per online
// replica); 0 from a replica, or from an error (a user who may not run ROLE).
int online_replicas(const Reply& role) {
  const redisReply* r = role.get();
  if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 || reply_string(r->element[0]) != "master" ||
      r->element[2]->type != REDIS_REPLY_ARRAY) {
    return 0;
  }
  return static_cast<int>(r->element[2]->elements);
}

}  // namespace

std::string Session::name_prefix() {
  std::string out;
  if (name_pending_) {
    name_pending_ = false;
    name_reply_owed_ = true;
    append_command(out, {"CLIENT", "SETNAME", endpoint_.client_name});
  }
  if (role_pending_) {
    role_pending_ = false;
    role_reply_owed_ = true;
    append_command(out, {"ROLE"});
  }
  return out;
}

void Session::skip_name_reply(const Deadline& deadline) {
  if (name_reply_owed_) {
    transport_.read_reply(deadline);
    name_reply_owed_ = false;
  }
  if (role_reply_owed_) {
    replicas_ = online_replicas(transport_.read_reply(deadline));
    role_reply_owed_ = false;
  }
}

int Session::count_replicas() {
  std::string out;
  append_command(out, {"ROLE"});
  return online_replicas(round_trip(out, Millis(0)));
}

std::vector<Reply> Session::exchange(const std::vector<Args>& commands, Millis extra) {
  request_sent_ = false;
  ensure_connected();
  std::string out = name_prefix();
  for (const auto& cmd : commands) append_command(out, cmd);
  request_sent_ = true;
  transport_.write_all(out, within(timeout_));
  auto deadline = within(extra + timeout_);
  skip_name_reply(deadline);
  std::vector<Reply> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    replies.push_back(transport_.read_reply(deadline));
  }
  for (const auto& r : replies) {
    if (is_auth_reply(r.get())) throw reply_error({r->str, r->len}, {});
  }
  return replies;
}

Reply Session::round_trip(std::string_view request, Millis extra) {
  ensure_connected();
  std::string prefix = name_prefix();
  transport_.write_all(prefix.empty() ? request : prefix.append(request), within(timeout_));
  auto deadline = within(extra + timeout_);
  skip_name_reply(deadline);
  return transport_.read_reply(deadline);
}

void Session::send_formatted(std::string_view resp) {
  ensure_connected();
  request_sent_ = true;
  std::string prefix = name_prefix();
  transport_.write_all(prefix.empty() ? resp : prefix.append(resp), within(timeout_));
}

Reply Session::receive() {
  if (!connected()) throw Error(kConnection, "no reply pending: the connection was closed");
  skip_name_reply(within(timeout_));
  Reply r = transport_.read_reply(within(timeout_));
  if (is_auth_reply(r.get())) {
    close();  // the replies still on the way are refused too
    throw reply_error({r->str, r->len}, {});
  }
  return r;
}

Reply Session::receive(Millis block) {
  if (!connected()) {
    throw Error(kConnection, fmt::format("not connected to {}", endpoint_.describe()),
                "subscribe before waiting for messages");
  }
  skip_name_reply(within(timeout_));
  return transport_.poll_reply(within(block));
}

}  // namespace rcoord
