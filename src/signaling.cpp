#include "signaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "pubsub.hpp"
#include "script.hpp"
#include "signals.hpp"
#include "token.hpp"

namespace rcoord::signaling {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kType = "signal";

// One channel a waiter listens on: where it registers, and its own pub/sub channel.
struct Listening {
  std::string name;
  std::string registry;
  std::string own;
  std::optional<std::string> data;
};

// Messages are tagged by the send scripts: '*' broadcast, '1' for one receiver.
constexpr char kBroadcast = '*';
constexpr char kForOne = '1';

// How long one subscriber is listened to before the next, when channels are on several
// cluster nodes.
constexpr Millis kSlice{20};

}  // namespace

Sent send(Connection& conn, const Keys& keys, std::string_view channel, std::string_view data,
          bool one) {
  check_name("signal channel", channel);
  Sent s;
  s.channel = std::string(channel);
  Reply r = eval(conn, one ? lua::kSignalSendOne : lua::kSignalSend, {keys.object(kType, channel)},
                 {keys.aux(kType, channel, ""), std::string(data)});
  s.receivers = reply_integer(r.get());
  return s;
}

namespace {

// One wait: the channels listened on, their subscribers, and what came so far.
class Waiter {
 public:
  Waiter(Connection& conn, const Keys& keys, const std::vector<std::string>& channels,
         const WaitOptions& opts)
      : conn_(conn), keys_(keys), opts_(opts), id_(random_token()) {
    for (const auto& name : channels) {
      check_name("signal channel", name);
      bool seen = std::any_of(listening_.begin(), listening_.end(),
                              [&](const Listening& l) { return l.name == name; });
      if (!seen) {
        listening_.push_back({name, keys.object(kType, name), keys.aux(kType, name, id_), {}});
      }
    }
    leave_.reserve(listening_.size());
    for (const auto& l : listening_) leave_.push_back({"ZREM", l.registry, id_});
  }

  Waited run() {
    auto start = Clock::now();
    subscribe();
    try {
      listen();
    } catch (const Error&) {
      signals::Uninterruptible quiet;
      try {
        conn_.pipeline_each(leave_);
      } catch (const Error&) {
        // Unreachable: the entries go stale by themselves, and a send skips dead waiters.
      }
      throw;
    }
    leave();
    result_.complete = satisfied();
    result_.waited_ms = std::chrono::duration_cast<Millis>(Clock::now() - start).count();
    if (opts_.all || !result_.complete) {
      result_.messages.clear();
      for (const auto& l : listening_) {
        result_.messages.push_back({l.data.has_value(), l.name, l.data.value_or(std::string())});
      }
    }
    return std::move(result_);
  }

 private:
  // Subscribe before registering: once a send can pick us, we are listening.
  // On Redis Cluster each channel is listened to on the node of its registry, where the
  // send scripts publish: channels on several nodes take one subscriber each.
  void subscribe() {
    std::vector<std::string> own;
    std::vector<std::string> registries;
    for (const auto& l : listening_) {
      own.push_back(l.own);
      registries.push_back(l.registry);
    }
    Endpoint at = conn_.endpoint();
    while (!own.empty()) {
      if (subs_.size() > listening_.size()) {
        throw Error(kServer, "cluster error: the nodes of the channels keep changing",
                    "run the command again once the resharding is over");
      }
      subs_.emplace_back(at, conn_.timeout());
      auto away = subs_.back().subscribe_routed(own, registries);
      own.clear();
      registries.clear();
      for (auto& e : away) {
        own.push_back(std::move(e.channel));
        registries.push_back(std::move(e.route_key));
        at = e.node;
      }
    }
  }

  // Registers in every channel's registry, then takes messages until satisfied or the
  // timeout.
  void listen() {
    std::string how_long =
        opts_.timeout ? std::to_string(opts_.timeout->count()) : std::string("forever");
    for (const auto& l : listening_) {
      eval(conn_, lua::kSignalRegister, {l.registry}, {id_, how_long});
    }
    auto deadline = deadline_after(opts_.timeout);
    while (!satisfied()) {
      auto now = Clock::now();
      if (now >= deadline) break;
      Millis block = deadline == Clock::time_point::max()
                         ? Millis::max()
                         : std::chrono::duration_cast<Millis>(deadline - now) + Millis(1);
      if (auto m = next_message(block)) receive(*m);
    }
  }

  // Leave the registries, then unsubscribe: a --one send that picked us ran before we left,
  // so its message is in front of the unsubscribe confirmation and is seen here. The registries
  // may be on other cluster nodes: a ZREM redirected is asked again there (it is idempotent).
  void leave() {
    signals::Uninterruptible quiet;
    for (const auto& r : conn_.pipeline_each(leave_)) check_reply(r, "ZREM");
    for (auto& sub : subs_) {
      for (const auto& m : sub.unsubscribe()) receive(m);
    }
  }

  // The next message from any subscriber: with several (several nodes), each is listened to
  // in turn for a short slice.
  std::optional<Message> next_message(Millis block) {
    if (subs_.size() == 1) return subs_.front().next(block);
    for (auto& sub : subs_) {
      if (auto m = sub.next(std::min(block, kSlice))) return m;
    }
    return std::nullopt;
  }

  bool satisfied() const {
    auto got = [](const Listening& l) { return l.data.has_value(); };
    return opts_.all ? std::all_of(listening_.begin(), listening_.end(), got)
                     : std::any_of(listening_.begin(), listening_.end(), got);
  }

  void receive(const Message& m) {
    if (!take(m)) hand_on(m);
  }

  // Takes a message if it is still wanted; false when it is not. (The send that delivered
  // it took us out of that channel's registry.)
  bool take(const Message& m) {
    if (m.data.empty() || (m.data.front() != kBroadcast && m.data.front() != kForOne)) {
      return true;  // not from a send script: ignore it
    }
    for (auto& l : listening_) {
      if (m.channel != l.own) continue;
      if (l.data || satisfied()) return false;
      l.data = m.data.substr(1);
      if (!opts_.all) result_.messages.push_back({true, l.name, *l.data});
      return true;
    }
    return true;
  }

  // A message meant for one receiver that we do not use: pass it on to another waiter.
  void hand_on(const Message& m) {
    if (m.data.front() != kForOne) return;  // a broadcast reached the others already
    for (const auto& l : listening_) {
      if (m.channel != l.own) continue;
      if (send(conn_, keys_, l.name, std::string_view(m.data).substr(1), true).receivers == 0) {
        result_.dropped.push_back(l.name);
      }
    }
  }

  Connection& conn_;
  const Keys& keys_;
  const WaitOptions& opts_;
  std::string id_;
  std::vector<Listening> listening_;
  std::vector<Args> leave_;  ///< the ZREMs that take us out of every registry
  std::vector<Subscriber> subs_;
  Waited result_;
};

}  // namespace

Waited wait(Connection& conn, const Keys& keys, const std::vector<std::string>& channels,
            const WaitOptions& opts) {
  if (channels.empty()) throw Error(kUsage, "no channel to wait on", "name at least one channel");
  return Waiter(conn, keys, channels, opts).run();
}

}  // namespace rcoord::signaling
