#include "redirect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "errors.hpp"

namespace rcoord {

void await_replicas(Session& session, int replicas) {
  session.ensure_connected();
  // WAIT itself takes up to the timeout (or what is left before the deadline); its reply
  // gets one more timeout to arrive.
  Millis timeout = session.timeout();
  Millis wait = timeout;
  if (session.deadline() != Session::Clock::time_point::max()) {
    auto left = std::chrono::duration_cast<Millis>(session.deadline() - Session::Clock::now());
    wait = std::clamp(left, Millis(1), wait);
  }
  std::string out;
  append_command(out, {"WAIT", std::to_string(replicas), std::to_string(wait.count())});
  Reply r = session.round_trip(out, timeout);
  check_reply(r, "WAIT");
  std::int64_t acked = reply_integer(r.get());
  if (acked < replicas) {
    throw ReplicaShortfall(
        kConnection,
        fmt::format("only {} of {} replicas acknowledged the write to {} within {}", acked,
                    replicas, session.endpoint().describe(), format_duration(timeout)),
        "check the replicas (rcoord doctor), lower --wait-replicas, or raise --timeout");
  }
}

namespace cluster {
namespace {

constexpr const char* kCheckHint =
    "check the cluster with 'rcoord doctor' or 'redis-cli --cluster check'";

}  // namespace

bool split_address(std::string_view address, std::string& host, int& port) {
  auto colon = address.rfind(':');
  if (colon == std::string_view::npos) return false;
  host = std::string(address.substr(0, colon));
  std::string digits(address.substr(colon + 1));
  if (digits.empty() || digits.size() > 5 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  port = std::stoi(digits);
  return port > 0 && port < 65536;
}

Redirect parse_redirect(const redisReply* r) {
  Redirect out;
  if (r == nullptr || r->type != REDIS_REPLY_ERROR) return out;
  std::string_view msg(r->str, r->len);
  if (msg.starts_with("TRYAGAIN")) {
    out.kind = Redirect::Kind::kTryAgain;
    out.text = std::string(msg);
    return out;
  }
  bool moved = msg.starts_with("MOVED ");
  if (!moved && !msg.starts_with("ASK ")) return out;
  // MOVED <slot> <host>:<port>
  std::istringstream words{std::string(msg)};
  std::string verb;
  std::string slot;
  std::string address;
  words >> verb >> slot >> address;
  if (slot.empty() || address.empty() ||
      !std::all_of(slot.begin(), slot.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      slot.size() > 5 || !split_address(address, out.host, out.port)) {
    return out;  // not a redirect we understand: the caller reports the error as it is
  }
  out.slot = std::stoi(slot);
  out.kind = moved ? Redirect::Kind::kMoved : Redirect::Kind::kAsk;
  out.text = std::string(msg);
  return out;
}

bool is_redirect(const redisReply* r) {
  auto kind = parse_redirect(r).kind;
  return kind == Redirect::Kind::kMoved || kind == Redirect::Kind::kAsk;
}

Redirect pipeline_redirect(const std::vector<Reply>& replies) {
  if (replies.empty()) return {};
  Redirect first = parse_redirect(replies.front().get());
  if (first.kind == Redirect::Kind::kNone) return first;
  for (std::size_t i = 1; i < replies.size(); ++i) {
    Redirect r = parse_redirect(replies[i].get());
    if (r.kind != first.kind || r.host != first.host || r.port != first.port) return {};
  }
  return first;
}

Endpoint endpoint_at(const Endpoint& base, const Redirect& to) {
  Endpoint out = base;
  if (to.host == "?") {
    throw Error(kServer, fmt::format("cluster error: {} names no address for the node", to.text),
                "set cluster-preferred-endpoint-type to ip (or give nodes hostnames)");
  }
  if (!to.host.empty()) {
    out.host = to.host;
  } else if (!base.socket_path.empty()) {
    // A node unsure of its own address, reached through a Unix socket: it is on this machine.
    out.host = "127.0.0.1";
  }
  out.port = to.port;
  out.socket_path.clear();  // a redirect always names a TCP address
  return out;
}

void Budget::hop(const Redirect& r) {
  bool ask = r.kind == Redirect::Kind::kAsk;
  if (ask ? ++asks_ > kMaxHops + kMaxRetries : ++hops_ > kMaxHops) {
    throw Error(kServer,
                fmt::format("cluster error: still redirected after {} hops (last: {})",
                            ask ? asks_ - 1 : kMaxHops, r.text),
                kCheckHint);
  }
}

void Budget::pause(const Redirect& r) {
  if (++retries_ > kMaxRetries) {
    throw Error(kServer,
                fmt::format("cluster error: a slot stayed in migration ({}) through {} retries",
                            r.text, kMaxRetries),
                "run the command again once the resharding is over");
  }
  // 5, 10, 20 ... ms, at most 200 ms: about 3 s in all before giving up.
  auto ms = std::min(200, 5 << std::min(retries_ - 1, 6));
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

Routed send_routed(Session& here, const std::vector<Args>& commands, Millis extra) {
  using Kind = Redirect::Kind;
  Budget budget;
  for (;;) {
    Routed out{here.exchange(commands, extra), std::nullopt};
    auto to = pipeline_redirect(out.replies);
    if (to.kind == Kind::kNone) return out;
    if (to.kind == Kind::kTryAgain) {
      budget.pause(to);
      continue;
    }
    budget.hop(to);
    Endpoint target = endpoint_at(here.endpoint(), to);
    if (to.kind == Kind::kMoved) {
      // The slot lives there now: move this session for good.
      here.move_to(std::move(target));
      continue;
    }
    // ASK: the slot is being migrated and these keys are on the target already. Ask it
    // once, without moving: the next command may find its keys here again.
    std::vector<Args> asking;
    for (const auto& cmd : commands) {
      asking.push_back({"ASKING"});
      asking.push_back(cmd);
    }
    Session& there = out.asked.emplace(std::move(target), here.timeout());
    there.set_deadline(here.deadline());
    auto answers = there.exchange(asking, extra);
    out.replies.clear();
    for (std::size_t i = 1; i < answers.size(); i += 2) {
      out.replies.push_back(std::move(answers[i]));
    }
    auto again = pipeline_redirect(out.replies);
    if (again.kind == Kind::kNone) return out;
    // TRYAGAIN (keys split between the two nodes) or the migration moved on: start over.
    if (again.kind == Kind::kTryAgain) budget.pause(again);
  }
}

}  // namespace cluster
}  // namespace rcoord
