#include "loss_watch.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "errors.hpp"
#include "signals.hpp"

namespace rcoord {
namespace {

constexpr std::string_view kInvalidations = "__redis__:invalidate";

// The prefixes to ask the server for: a key that another one begins with is already covered
// (and the server refuses prefixes that overlap). What is broadcast beyond the watched keys
// themselves (a lock's waiters, its history) is sorted out here, by changed().
std::vector<std::string> prefixes_of(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> prefixes;
  for (auto& key : keys) {
    if (!prefixes.empty() && key.starts_with(prefixes.back())) continue;
    prefixes.push_back(std::move(key));
  }
  return prefixes;
}

bool is_error(const Reply& r) { return r == nullptr || r->type == REDIS_REPLY_ERROR; }

}  // namespace

LossWatch::LossWatch(Endpoint endpoint, Millis timeout, std::vector<std::string> keys)
    : messages_(std::move(endpoint), timeout), keys_(std::move(keys)) {}

std::unique_ptr<LossWatch> LossWatch::start(const WatchedKeys& watched,
                                            std::chrono::steady_clock::time_point deadline) {
  if (watched.conn == nullptr || watched.keys.empty()) return nullptr;
  Connection& renewing = *watched.conn;
  // The messages' connection goes where the renewing one is now (a cluster's node, the
  // master Sentinel named): tracking redirects only to a client of the same server.
  std::unique_ptr<LossWatch> watch(
      new LossWatch(renewing.endpoint(), renewing.timeout(), watched.keys));
  try {
    signals::Uninterruptible quiet;  // a signal meanwhile is the supervisor's, afterwards
    DeadlineCap bounded(watch->messages_, deadline);
    Reply id = watch->messages_.command_raw({"CLIENT", "ID"});
    if (is_error(id) || id->type != REDIS_REPLY_INTEGER) return nullptr;
    if (is_error(watch->messages_.command_raw({"SUBSCRIBE", std::string(kInvalidations)}))) {
      return nullptr;
    }
    Args tracking{"CLIENT", "TRACKING", "ON", "REDIRECT", std::to_string(id->integer), "BCAST"};
    for (auto& prefix : prefixes_of(watched.keys)) {
      tracking.push_back("PREFIX");
      tracking.push_back(std::move(prefix));
    }
    tracking.push_back("NOLOOP");  // the renewals of this connection are no news
    DeadlineCap renewing_bounded(renewing, deadline);
    // Off first: a connection that watched another lease before (`queue consume`, a second
    // `elect run` term) keeps no prefix or redirect of it.
    auto replies = renewing.pipeline({{"CLIENT", "TRACKING", "OFF"}, std::move(tracking)});
    if (replies.size() != 2 || is_error(replies[1])) return nullptr;
  } catch (const Error&) {
    return nullptr;
  }
  return watch;
}

bool LossWatch::concerns_us(const redisReply* message) const {
  // ["message", "__redis__:invalidate", keys]: keys is an array, or nil for a flush.
  if (message->type != REDIS_REPLY_ARRAY || message->elements != 3) return false;
  const redisReply* kind = message->element[0];
  if (kind->type != REDIS_REPLY_STRING || std::string_view(kind->str, kind->len) != "message") {
    return false;  // the subscription's confirmation
  }
  const redisReply* keys = message->element[2];
  auto watched = [this](const redisReply* key) {
    return key->type == REDIS_REPLY_STRING &&
           std::find(keys_.begin(), keys_.end(), std::string_view(key->str, key->len)) !=
               keys_.end();
  };
  switch (keys->type) {
    case REDIS_REPLY_NIL:
      return true;  // FLUSHALL or FLUSHDB: everything went
    case REDIS_REPLY_STRING:
      return watched(keys);
    case REDIS_REPLY_ARRAY:
      return std::any_of(keys->element, keys->element + keys->elements, watched);
    default:
      return false;
  }
}

bool LossWatch::changed() {
  if (fd() < 0) return false;
  bool hit = false;
  try {
    signals::Uninterruptible quiet;
    while (Reply message = messages_.receive(Millis(0))) hit = concerns_us(message.get()) || hit;
  } catch (const Error&) {
    messages_.close();  // the watch stops; renewals go on watching
    return true;
  }
  return hit;
}

}  // namespace rcoord
