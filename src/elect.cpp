#include "elect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "pubsub.hpp"
#include "script.hpp"
#include "token.hpp"
#include "waiting.hpp"

namespace rcoord::elect {
namespace {

// What the element accessors name when a script reply has not the shape they expect.
constexpr std::string_view kScripts = "an election script";

using waiting::jittered;
using waiting::since;

using Clock = std::chrono::steady_clock;
constexpr std::string_view kType = "elect";

// When no resignation wakes a waiting candidate (a leader crashed, a wake-up went to a
// candidate that was killed), it retries anyway: at the leader's expiry, and at most every
// kMaxBackoff.
constexpr Millis kFirstBackoff{500};
constexpr Millis kMaxBackoff{5000};
// An observer reads the state this long after the lease it knows of should have ended.
constexpr Millis kExpiryMargin{5};

void check_id(std::string_view id) {
  if (id.empty()) throw Error(kUsage, "empty --id", "give each candidate a non-empty id");
}

std::string channel(const Keys& keys, std::string_view name) {
  return keys.aux(kType, name, "changes");
}

// Reads one number off the front of `text` (followed by a space or the end).
bool take_number(std::string_view& text, std::int64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc{}) return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  if (!text.empty()) {
    if (text.front() != ' ') return false;
    text.remove_prefix(1);
  }
  return true;
}

// An announcement of elect_campaign ('L <term> <ttl_ms> <id>') or elect_resign ('V <term>').
std::optional<Status> parse_announcement(std::string_view name, std::string_view text) {
  Status s;
  s.name = std::string(name);
  if (text.size() < 3 || text[1] != ' ') return std::nullopt;
  char kind = text[0];
  text.remove_prefix(2);
  if (!take_number(text, s.term)) return std::nullopt;
  if (kind == 'V') return text.empty() ? std::optional<Status>(s) : std::nullopt;
  if (kind != 'L' || !take_number(text, s.ttl_ms) || text.empty()) return std::nullopt;
  s.leader = true;
  s.id = std::string(text);
  return s;
}

// The order of states: the leader of term t, then the vacancy after it, then term t+1.
std::int64_t sequence(const Status& s) { return s.term * 2 + (s.leader ? 0 : 1); }

}  // namespace

Campaign campaign(Connection& conn, const Keys& keys, std::string_view name,
                  const CampaignOptions& opts) {
  check_name("election", name);
  check_id(opts.id);
  Campaign result;
  result.name = std::string(name);
  result.id = opts.id;
  // The wake list goes to the script too, which refuses it when it holds another type.
  std::string wake_key = keys.aux(kType, name, "wake");
  Args script_keys{
      keys.object(kType, name),  keys.aux(kType, name, "term"),  wake_key,
      keys.history(kType, name), keys.aux(kType, name, "taken"), keys.aux(kType, name, "stats")};
  Args args{opts.id,
            std::to_string(opts.ttl.count()),
            channel(keys, name),
            opts.exclusive ? "1" : "0",
            opts.token.empty() ? random_token() : opts.token,
            opts.who,
            std::to_string(keys.history_cap()),
            std::string()};  // the first losing answer's server time: none yet
  result.who = opts.who;

  Take take{lua::kElectCampaign, script_keys, args,
            [&] {
              ResignOptions give_back;
              give_back.id = opts.id;
              give_back.token = args[4];
              resign(conn, keys, name, give_back);
            },
            [](const redisReply* reply) { return element_integer(reply, 0, kScripts) == 1; }};
  auto start = Clock::now();
  Millis backoff = kFirstBackoff;
  result.sent = start;
  Reply r = eval_taking(conn, take);
  for (;;) {
    result.waited_ms = since(start).count();
    decode_campaign(r.get(), result);
    if (!result.leader && args.back().empty()) {
      // The next tries count their wait from the first answer, on the server's clock.
      args.back() = std::to_string(element_integer(r.get(), 4, kScripts));
    }
    if (result.leader || !opts.wait) return result;
    Millis left = opts.wait == Millis::max() ? Millis::max() : *opts.wait - since(start);
    if (left.count() <= 0) return result;
    // Sleep until a resignation pushes a wake-up, the leader's lease runs out, or the fallback.
    Millis leader_left = result.ttl_ms > 0 ? Millis(result.ttl_ms) : backoff;
    Millis block = waiting::cap_block(std::min({left, jittered(std::min(leader_left, backoff))}),
                                      conn.timeout());
    r = retry_after_wait(conn, take, wake_key, block, opts.ttl, result.sent);
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

bool renew(Connection& conn, const Keys& keys, std::string_view name, std::string_view id,
           std::int64_t term, Millis ttl) {
  check_name("election", name);
  Reply r = eval(conn, lua::kElectRenew, {keys.object(kType, name), keys.aux(kType, name, "stats")},
                 {std::string(id), std::to_string(term), std::to_string(ttl.count())});
  return reply_integer(r.get()) == 1;
}

Resigned resign(Connection& conn, const Keys& keys, std::string_view name,
                const ResignOptions& opts) {
  check_name("election", name);
  check_id(opts.id);
  Args args{opts.id, opts.term ? std::to_string(*opts.term) : std::string(), opts.token,
            channel(keys, name)};
  Args recorded = history::ending_args(keys, opts.ending);
  args.insert(args.end(), recorded.begin(), recorded.end());
  Reply r = eval(conn, lua::kElectResign,
                 {keys.object(kType, name), keys.aux(kType, name, "wake"),
                  keys.history(kType, name), keys.aux(kType, name, "taken")},
                 args);
  Resigned out;
  out.name = std::string(name);
  out.id = opts.id;
  out.term = reply_integer(r.get());
  out.resigned = out.term > 0;
  return out;
}

Status status(Connection& conn, const Keys& keys, std::string_view name) {
  check_name("election", name);
  Reply r =
      eval(conn, lua::kElectStatus, {keys.object(kType, name), keys.aux(kType, name, "term")}, {});
  Status s = decode_status(r.get());
  s.name = std::string(name);
  return s;
}

Call status_call(const Keys& keys, std::string_view name) {
  return script_call(lua::kElectStatus, {keys.object(kType, name), keys.aux(kType, name, "term")},
                     {});
}

void decode_campaign(const redisReply* r, Campaign& out) {
  out.leader = element_integer(r, 0, kScripts) == 1;
  out.term = element_integer(r, 1, kScripts);
  out.ttl_ms = std::max<std::int64_t>(0, element_integer(r, 2, kScripts));
  out.leader_id = element_string(r, 3, kScripts);
}

Status decode_status(const redisReply* r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 6) {
    throw Error(kServer, "unexpected reply from the elect_status script");
  }
  Status s;
  s.id = reply_string(r->element[0]);
  s.leader = !s.id.empty();
  s.term = reply_integer(r->element[1]);
  s.ttl_ms = std::max<std::int64_t>(0, reply_integer(r->element[2]));
  s.holder = {unpack(reply_string(r->element[3])), reply_integer(r->element[4]),
              reply_integer(r->element[5])};
  return s;
}

void observe(Connection& conn, const Keys& keys, std::string_view name,
             std::optional<Millis> duration, const std::function<void(const Status&)>& on_change) {
  check_name("election", name);
  // Subscribe first, read second: a change between the two is then seen twice, never lost.
  Subscriber sub(conn.endpoint(), conn.timeout());
  sub.subscribe_routed({channel(keys, name)}, {keys.object(kType, name)});

  auto deadline = deadline_after(duration);
  std::int64_t shown = -1;
  auto lease_end = Clock::time_point::max();  // when the lease of the leader shown runs out
  auto show = [&](const Status& s, Clock::time_point seen) {
    std::int64_t seq = sequence(s);
    if (seq < shown) return;  // older than what was shown: an announcement overtaken by a read
    if (s.leader) {
      // A lease with no expiry (set by hand) is looked at again after the longest backoff.
      lease_end = seen + (s.ttl_ms > 0 ? Millis(s.ttl_ms) + kExpiryMargin : kMaxBackoff);
    } else {
      lease_end = Clock::time_point::max();
    }
    if (seq == shown) return;
    shown = seq;
    on_change(s);
  };
  show(status(conn, keys, name), Clock::now());

  for (;;) {
    auto now = Clock::now();
    if (now >= deadline) return;
    auto until = std::min(deadline, lease_end);
    auto block = until == Clock::time_point::max()
                     ? Millis::max()
                     : std::chrono::duration_cast<Millis>(until - now) + Millis(1);
    if (auto m = sub.next(block)) {
      if (auto s = parse_announcement(name, m->data)) show(*s, Clock::now());
      continue;
    }
    if (Clock::now() < lease_end || lease_end == Clock::time_point::max()) continue;
    // The lease we know of should be over: read the state, then handle the announcements
    // that were published before that read, so that states are shown in order.
    auto read_at = Clock::now();
    Status current = status(conn, keys, name);
    for (const auto& m : sub.sync()) {
      if (auto s = parse_announcement(name, m.data)) show(*s, read_at);
    }
    show(current, read_at);
  }
}

Lease lease(Connection& conn, const Keys& keys, const Campaign& won, const std::string& token,
            Millis ttl) {
  Lease held = connection_lease(
      conn, ttl, won.sent,
      [&conn, &keys, name = won.name, id = won.id, term = won.term, ttl] {
        return renew(conn, keys, name, id, term, ttl);
      },
      [&conn, &keys, name = won.name, id = won.id, term = won.term, token, who = won.who,
       waited = won.waited_ms](const Ending& ending) {
        resign(conn, keys, name, {id, term, token, ending.of_taker(who, waited)});
        return false;  // whether a candidate was woken is not told
      });
  held.watched = {{&conn, {keys.object(kType, won.name)}}};  // the leader's hash
  return held;
}

}  // namespace rcoord::elect
