#include "pubsub.hpp"

#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <string_view>

#include "errors.hpp"
#include "redirect.hpp"
#include "signals.hpp"

namespace rcoord {
namespace {

using Clock = std::chrono::steady_clock;

// Element `i` of a pushed message as text, "" when it is missing or not text: unlike
// element_string(), never throws.
std::string text_at(const redisReply* r, std::size_t i) {
  if (r->elements <= i) return {};
  const redisReply* e = r->element[i];
  if (e->type == REDIS_REPLY_STRING || e->type == REDIS_REPLY_STATUS) return {e->str, e->len};
  return {};
}

}  // namespace

Clock::time_point deadline_after(std::optional<Millis> wait) {
  auto now = Clock::now();
  if (!wait || *wait >= std::chrono::duration_cast<Millis>(Clock::time_point::max() - now)) {
    return Clock::time_point::max();
  }
  return now + *wait;
}

Subscriber::Subscriber(Endpoint endpoint, Millis io_timeout)
    : conn_(std::move(endpoint), io_timeout), heard_at_(Clock::now()) {}

void Subscriber::no_answer() {
  conn_.close();
  throw Error(kConnection,
              fmt::format("no reply from {} within {}", conn_.endpoint().describe(),
                          format_duration(conn_.timeout())),
              "the server may be paused, overloaded or unreachable; raise --timeout");
}

Reply Subscriber::reply_in_time() {
  Reply r = conn_.receive(conn_.timeout());
  if (!r) no_answer();
  return r;
}

void Subscriber::send_ping() {
  std::string out;
  append_command(out, {"PING"});
  conn_.send_formatted(out);
  if (pings_outstanding_++ == 0) ping_sent_at_ = Clock::now();
}

Subscriber::Kind Subscriber::take(Reply r, long long& count) {
  check_reply(r, "SUBSCRIBE");
  heard_at_ = Clock::now();
  if (r->type != REDIS_REPLY_ARRAY || r->elements < 2) {
    throw Error(kServer, "unexpected reply on a subscribed connection");
  }
  std::string kind = text_at(r.get(), 0);
  if (kind == "message" && r->elements == 3) {
    queue_.push_back({text_at(r.get(), 1), text_at(r.get(), 2)});
    return Kind::kMessage;
  }
  if (kind == "pong") {
    if (pings_outstanding_ > 0 && --pings_outstanding_ > 0) ping_sent_at_ = heard_at_;
    return Kind::kPong;
  }
  if ((kind == "subscribe" || kind == "unsubscribe") && r->elements == 3) {
    count = r->element[2]->type == REDIS_REPLY_INTEGER ? r->element[2]->integer : 0;
    return kind == "subscribe" ? Kind::kSubscribe : Kind::kUnsubscribe;
  }
  throw Error(kServer, fmt::format("unexpected '{}' reply on a subscribed connection", kind));
}

void Subscriber::confirm(Reply first, std::size_t channels) {
  // One confirmation per channel; a message on a channel already confirmed may come between
  // them, and is kept.
  Reply r = std::move(first);
  std::size_t confirmed = 0;
  for (;;) {
    long long count = 0;
    if (take(std::move(r), count) == Kind::kSubscribe) ++confirmed;
    if (confirmed == channels) return;
    r = reply_in_time();
  }
}

void Subscriber::subscribe(const std::vector<std::string>& channels) {
  if (channels.empty()) return;
  Args args{"SUBSCRIBE"};
  args.insert(args.end(), channels.begin(), channels.end());
  confirm(conn_.command_raw(args), channels.size());
}

std::vector<Subscriber::Elsewhere> Subscriber::subscribe_routed(
    std::vector<std::string> channels, std::vector<std::string> route_keys) {
  cluster::Budget budget;
  std::vector<Elsewhere> later;  // served by yet other nodes than the one moved to
  for (;;) {
    // EXISTS on each route key, in the same write as the SUBSCRIBE: its reply says whether
    // this node holds the key (a redirect otherwise) at no extra round trip.
    std::string out;
    for (const auto& key : route_keys) append_command(out, {"EXISTS", key});
    Args args{"SUBSCRIBE"};
    args.insert(args.end(), channels.begin(), channels.end());
    append_command(out, args);
    conn_.send_formatted(out);
    std::vector<Elsewhere> away;
    std::vector<std::string> here;
    for (std::size_t i = 0; i < route_keys.size(); ++i) {
      Reply r = conn_.receive();
      auto to = cluster::parse_redirect(r.get());
      if (to.kind == cluster::Redirect::Kind::kMoved || to.kind == cluster::Redirect::Kind::kAsk) {
        budget.hop(to);
        away.push_back({channels[i], route_keys[i], cluster::endpoint_at(conn_.endpoint(), to)});
      } else {
        here.push_back(channels[i]);
      }
    }
    confirm(reply_in_time(), channels.size());
    if (away.empty()) return later;
    // A cluster, and some publishers are elsewhere: start over on a clean connection, here
    // with the channels served here, or (none) on the node of the first channel.
    queue_.clear();
    if (!here.empty()) {
      conn_ = Connection(conn_.endpoint(), conn_.timeout());
      subscribe(here);
      later.insert(later.end(), away.begin(), away.end());
      return later;
    }
    Endpoint next = away.front().node;
    conn_ = Connection(next, conn_.timeout());
    channels.clear();
    route_keys.clear();
    for (auto& e : away) {
      if (e.node.host == next.host && e.node.port == next.port) {
        channels.push_back(std::move(e.channel));
        route_keys.push_back(std::move(e.route_key));
      } else {
        later.push_back(std::move(e));
      }
    }
  }
}

std::vector<Message> Subscriber::sync() {
  // Our PING is answered after every message published before it, and after the PINGs
  // already under way: once none is outstanding, everything before it is in the queue.
  send_ping();
  while (pings_outstanding_ > 0) {
    long long count = 0;
    take(reply_in_time(), count);
  }
  std::vector<Message> out(queue_.begin(), queue_.end());
  queue_.clear();
  return out;
}

std::optional<Message> Subscriber::next(Millis block) {
  auto deadline = deadline_after(block);
  for (;;) {
    if (!queue_.empty()) {
      Message m = std::move(queue_.front());
      queue_.pop_front();
      return m;
    }
    auto now = Clock::now();
    if (now >= deadline) return std::nullopt;
    // A silent connection is asked for a PONG after half a timeout; one that does not come
    // within a timeout means the server froze or cannot be reached.
    Clock::time_point check;
    if (pings_outstanding_ > 0) {
      check = ping_sent_at_ + conn_.timeout();
      if (now >= check) no_answer();
    } else {
      check = heard_at_ + conn_.timeout() / 2;
      if (now >= check) {
        send_ping();
        continue;
      }
    }
    auto until = std::min(deadline, check);
    auto wait = std::chrono::duration_cast<Millis>(until - now) + Millis(1);
    Reply r = conn_.receive(wait);
    if (!r) continue;
    long long count = 0;
    take(std::move(r), count);
  }
}

std::vector<Message> Subscriber::drain() {
  while (Reply r = conn_.receive(Millis(0))) {
    long long count = 0;
    take(std::move(r), count);
  }
  std::vector<Message> out(std::make_move_iterator(queue_.begin()),
                           std::make_move_iterator(queue_.end()));
  queue_.clear();
  return out;
}

std::vector<std::size_t> await_readable(const std::vector<Subscriber*>& subs, Millis block) {
  std::vector<pollfd> fds;
  fds.reserve(subs.size());
  for (const Subscriber* s : subs) fds.push_back({s->native_fd(), POLLIN, 0});
  auto deadline = deadline_after(block);
  for (;;) {
    timespec ts{};
    timespec* limit = nullptr;
    if (deadline != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Clock::now());
      if (left.count() <= 0) return {};
      ts = {static_cast<time_t>(left.count() / 1'000'000'000),
            static_cast<long>(left.count() % 1'000'000'000)};
      limit = &ts;
    }
    int n = ppoll(fds.data(), fds.size(), limit, signals::wait_mask());
    if (n == 0) return {};
    if (n > 0) {
      std::vector<std::size_t> ready;
      for (std::size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].revents != 0) ready.push_back(i);
      }
      return ready;
    }
    if (errno != EINTR) {
      throw Error(kConnection, fmt::format("poll failed: {}", std::strerror(errno)),
                  "check the system's limits on open files");
    }
    if (signals::wait_mask() != nullptr && signals::pending() != 0) {
      throw Error(kInterrupted, fmt::format("interrupted by signal {}", signals::pending()));
    }
  }
}

std::vector<Message> Subscriber::unsubscribe() {
  if (conn_.connected()) {
    Reply r = conn_.command_raw({"UNSUBSCRIBE"});
    for (;;) {
      long long count = -1;
      if (take(std::move(r), count) == Kind::kUnsubscribe && count == 0) break;
      r = reply_in_time();
    }
  }
  std::vector<Message> out(queue_.begin(), queue_.end());
  queue_.clear();
  return out;
}

}  // namespace rcoord
