#include "history.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "errors.hpp"
#include "reply.hpp"
#include "waiting.hpp"

namespace rcoord::history {
namespace {

std::string_view how_name(Ending::How how) {
  switch (how) {
    case Ending::How::kGivenBack:
      return "";
    case Ending::How::kWithdrawn:
      return "withdraw";
    case Ending::How::kLost:
      return "lost";
    case Ending::How::kTimedOut:
      return "timeout";
  }
  return "";
}

[[noreturn]] void unexpected() { throw Error(kServer, "unexpected entry in a history stream"); }

// The milliseconds of an entry id `<ms>-<seq>`.
std::int64_t id_ms(std::string_view id) {
  std::int64_t ms = 0;
  auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), ms);
  if (ec != std::errc() || end == id.data()) unexpected();
  return ms;
}

std::vector<Event> decode_entries(const redisReply* r) {
  std::vector<Event> out;
  if (r->type == REDIS_REPLY_NIL) return out;
  if (r->type != REDIS_REPLY_ARRAY) unexpected();
  out.reserve(r->elements);
  for (std::size_t i = 0; i < r->elements; ++i) out.push_back(decode_entry(r->element[i]));
  return out;
}

}  // namespace

Args ending_args(const Keys& keys, const Ending& ending) {
  return {std::to_string(keys.history_cap()), ending.who, std::string(how_name(ending.how)),
          ending.exit_code ? std::to_string(*ending.exit_code) : std::string(),
          ending.waited_ms ? std::to_string(*ending.waited_ms) : std::string()};
}

Event decode_entry(const redisReply* entry) {
  if (entry->type != REDIS_REPLY_ARRAY || entry->elements != 2) unexpected();
  const redisReply* fields = entry->element[1];
  if (fields->type != REDIS_REPLY_ARRAY || fields->elements % 2 != 0) unexpected();
  Event e;
  e.id = reply_string(entry->element[0]);
  e.at = id_ms(e.id);
  for (std::size_t i = 0; i + 1 < fields->elements; i += 2) {
    std::string name = reply_string(fields->element[i]);
    std::string value = reply_string(fields->element[i + 1]);
    if (name == "event") {
      e.event = std::move(value);
    } else if (name == "who") {
      e.who = unpack(value);
    } else if (name == "token") {
      e.token = std::move(value);
    } else if (name == "held_by") {
      e.held_by = std::move(value);
    } else {
      e.fields.emplace_back(std::move(name), std::move(value));
    }
  }
  return e;
}

Page read(Connection& conn, const std::string& key, std::optional<std::int64_t> since_ms,
          std::optional<std::int64_t> limit) {
  Page page;
  std::string from = since_ms ? std::to_string(std::max<std::int64_t>(0, *since_ms)) : "-";
  // The newest `limit` of them, read newest first and turned around; else all, oldest first.
  // The newest entry of all (where a --follow goes on from) is asked in the same write.
  std::vector<Args> asks{limit ? Args{"XREVRANGE", key, "+", from, "COUNT", std::to_string(*limit)}
                               : Args{"XRANGE", key, from, "+"},
                         {"XREVRANGE", key, "+", "-", "COUNT", "1"}};
  // One key, one slot: only a slot moving between the two can redirect one of them.
  std::vector<Reply> replies = conn.pipeline_each(asks);
  for (std::size_t i = 0; i < replies.size(); ++i) check_key_reply(replies[i], asks[i][0], key);
  Reply& r = replies[0];
  page.events = decode_entries(r.get());
  if (limit) std::reverse(page.events.begin(), page.events.end());
  Reply& last = replies[1];
  auto newest = decode_entries(last.get());
  page.exists = !newest.empty();
  page.last_id = newest.empty() ? "0-0" : newest.front().id;
  return page;
}

std::vector<Event> read_after(Connection& conn, const std::string& key, const std::string& after,
                              Millis block) {
  block = waiting::cap_block(block, conn.timeout());
  Reply r = conn.command_blocking(
      {"XREAD", "BLOCK", std::to_string(block.count()), "STREAMS", key, after}, block);
  check_key_reply(r, "XREAD", key);
  if (r->type == REDIS_REPLY_NIL) return {};
  // [[key, [entry...]]]
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
      r->element[0]->type != REDIS_REPLY_ARRAY || r->element[0]->elements != 2) {
    unexpected();
  }
  return decode_entries(r->element[0]->element[1]);
}

std::vector<std::string> types_present(Connection& conn, const Keys& keys,
                                       const std::vector<std::string>& types,
                                       std::string_view name) {
  // Every EXISTS goes in one write; on a cluster, a key of another node's slot is asked again
  // where it is (the two keys of one type share a slot).
  std::vector<Args> asks;
  for (const auto& t : types) {
    asks.push_back({"EXISTS", keys.history(t, name)});
    asks.push_back({"EXISTS", keys.object(t, name)});
  }
  std::vector<Reply> replies = conn.pipeline_each(asks);
  auto exists = [&](std::size_t k) {
    check_reply(replies[k], "EXISTS");
    return reply_integer(replies[k].get()) > 0;
  };
  std::vector<std::string> found;
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (exists(2 * i) || exists(2 * i + 1)) found.push_back(types[i]);
  }
  return found;
}

std::int64_t server_ms(Connection& conn) {
  Reply r = conn.command({"TIME"});
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
    throw Error(kServer, "unexpected reply to TIME");
  }
  return std::stoll(reply_string(r->element[0])) * 1000 +
         std::stoll(reply_string(r->element[1])) / 1000;
}

}  // namespace rcoord::history
