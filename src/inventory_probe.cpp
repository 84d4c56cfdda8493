#include "inventory_probe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <utility>

#include "duration.hpp"
#include "errors.hpp"
#include "identity.hpp"
#include "remove.hpp"

namespace rcoord::inventory::reads {
namespace {

// Readers of a shared lock listed with their takers (lock_status lists as many).
constexpr std::size_t kListedReaders = 100;
// Lapsed leases of a queue whose attempts are read to tell ready from dead; the rest (a
// crowd of consumers gone at once) count as ready, where most lapsed leases go.
constexpr std::size_t kLapsedRead = 1000;

template <typename Status>
Reading<Status> finished(std::optional<Status> status) {
  Reading<Status> r;
  r.status = std::move(status);
  return r;
}

template <typename Status>
Reading<Status> another_round(std::vector<Args> commands,
                              std::function<Reading<Status>(std::span<const Reply>)> then) {
  Reading<Status> r;
  r.commands = std::move(commands);
  r.then = std::move(then);
  return r;
}

// An integer kept as text (a hash field, a counter), or nullopt for nil or anything else: a
// script's tonumber().
std::optional<std::int64_t> number_of(const redisReply* r) {
  if (r->type == REDIS_REPLY_INTEGER) return r->integer;
  if (r->type != REDIS_REPLY_STRING) return std::nullopt;
  std::int64_t v = 0;
  const char* end = r->str + r->len;
  auto [at, ec] = std::from_chars(r->str, end, v);
  if (ec != std::errc() || at != end || r->len == 0) return std::nullopt;
  return v;
}

// A sorted set's score (ms since the epoch, as the scripts keep deadlines).
std::int64_t score_of(const redisReply* r) {
  if (auto n = number_of(r)) return *n;
  try {
    return static_cast<std::int64_t>(std::stod(reply_string(r)));
  } catch (const std::exception&) {
    throw Error(kServer, "unexpected reply from the server: expected a score");
  }
}

const redisReply* array(const Reply& r) {
  if (r->type != REDIS_REPLY_ARRAY) {
    throw Error(kServer, "unexpected reply from the server: expected an array");
  }
  return r.get();
}

// Members and their scores from a WITHSCORES reply.
std::vector<std::pair<std::string, std::int64_t>> scored(const Reply& r) {
  const redisReply* a = array(r);
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (std::size_t i = 0; i + 1 < a->elements; i += 2) {
    out.emplace_back(reply_string(a->element[i]), score_of(a->element[i + 1]));
  }
  return out;
}

std::string after(std::int64_t now_ms) { return "(" + std::to_string(now_ms); }

std::int64_t since(std::int64_t at, std::int64_t now_ms) {
  return at >= 0 ? std::max<std::int64_t>(0, now_ms - at) : -1;
}

// A counter: 0 when unset (a script's `tonumber(GET or '0')`).
std::int64_t counter_of(const redisReply* r) { return number_of(r).value_or(0); }

// --- lock ---------------------------------------------------------------------------------------

struct LockKeys {
  std::string hash, fence, readers, writers, rwait, rwho;
  explicit LockKeys(const Keys& keys, const std::string& name)
      : hash(keys.object("lock", name)),
        fence(keys.aux("lock", name, "fence")),
        readers(keys.aux("lock", name, "readers")),
        writers(keys.aux("lock", name, "writers")),
        rwait(keys.aux("lock", name, "rwait")),
        rwho(keys.aux("lock", name, "rwho")) {}
};

// `ended_at` and `exit_code` of a take kept by --min-hold (nil each while it is not kept).
lock::Kept kept_of(const redisReply* ended_at, const redisReply* code, std::int64_t now_ms) {
  lock::Kept k;
  if (auto at = number_of(ended_at)) {
    k.ended_at = *at;
    k.ended_ms = since(*at, now_ms);
    if (auto c = number_of(code); c && *c >= 0) k.exit_code = *c;
  }
  return k;
}

// A reader's kept mark: `ended_at`, the unit separator, the exit code.
lock::Kept reader_kept_of(std::string_view mark, std::int64_t now_ms) {
  lock::Kept k;
  auto sep = mark.find('\x1f');
  if (sep == std::string_view::npos || sep == 0) return k;
  std::int64_t at = 0;
  auto [end, ec] = std::from_chars(mark.data(), mark.data() + sep, at);
  if (ec != std::errc() || end != mark.data() + sep) return k;
  k.ended_at = at;
  k.ended_ms = since(at, now_ms);
  std::int64_t code = 0;
  std::string_view rest = mark.substr(sep + 1);
  auto [cend, cec] = std::from_chars(rest.data(), rest.data() + rest.size(), code);
  if (cec == std::errc() && cend == rest.data() + rest.size() && code >= 0) k.exit_code = code;
  return k;
}

// The writers and readers waiting for the lock: those whose heartbeat has not run out.
void waiting_commands(const LockKeys& k, std::int64_t now_ms, std::vector<Args>& out) {
  out.push_back({"ZCOUNT", k.writers, after(now_ms), "+inf"});
  out.push_back({"ZCOUNT", k.rwait, after(now_ms), "+inf"});
}

// The common case, a held lock, makes only the keys it reads: a pass makes them for every
// lock of the keyspace.
Reading<lock::Status> waiters_of(const Keys& keys, const std::string& name, lock::Status s,
                                 std::int64_t now_ms) {
  std::vector<Args> waits{{"ZCOUNT", keys.aux("lock", name, "writers"), after(now_ms), "+inf"},
                          {"ZCOUNT", keys.aux("lock", name, "rwait"), after(now_ms), "+inf"}};
  return another_round<lock::Status>(
      std::move(waits), [s = std::move(s)](std::span<const Reply> w) {
        lock::Status out = s;
        out.waiting = reply_integer(w[0].get()) + reply_integer(w[1].get());
        return finished<lock::Status>(std::move(out));
      });
}

// The writer's take (HMGET token who acquired_at fence ended_at exit_code) as a status.
lock::Status exclusive(const redisReply* f, std::int64_t pttl, std::int64_t now_ms) {
  lock::Status s;
  s.held = true;
  s.mode = "exclusive";
  s.token = reply_string(f->element[0]);
  s.fence = counter_of(f->element[3]);
  s.ttl_ms = std::max<std::int64_t>(0, pttl);
  std::int64_t at = number_of(f->element[2]).value_or(-1);
  s.held_ms = since(at, now_ms);
  s.holder = {unpack(reply_string(f->element[1])), at, s.held_ms};
  s.kept = kept_of(f->element[4], f->element[5], now_ms);
  return s;
}

// The readers' takers and kept marks (HMGET of the identities hash), one pair each.
Reading<lock::Status> with_readers(lock::Status s, std::vector<std::string> tokens,
                                   std::vector<std::int64_t> deadlines, const LockKeys& k,
                                   std::int64_t now_ms) {
  Args hmget{"HMGET", k.rwho};
  for (const auto& t : tokens) {
    hmget.push_back(t);
    hmget.push_back(t + "\x1fkept");
  }
  return another_round<lock::Status>(
      {std::move(hmget)}, [s = std::move(s), tokens = std::move(tokens),
                           deadlines = std::move(deadlines), now_ms](std::span<const Reply> r) {
        const redisReply* records = array(r[0]);
        lock::Status out = s;
        for (std::size_t i = 0; i < tokens.size() && 2 * i + 1 < records->elements; ++i) {
          lock::Reader reader;
          reader.token = tokens[i];
          reader.ttl_ms = std::max<std::int64_t>(0, deadlines[i] - now_ms);
          reader.holder = holder_of(reply_string(records->element[2 * i]), now_ms);
          reader.kept = reader_kept_of(reply_string(records->element[2 * i + 1]), now_ms);
          out.reader_list.push_back(std::move(reader));
        }
        return finished<lock::Status>(std::move(out));
      });
}

// No writer holds it: the last fence, the readers, the waiters, and whether anything but the
// fence is left.
Reading<lock::Status> not_held(const Keys& keys, const std::string& name, LockKeys k,
                               std::int64_t now_ms) {
  std::vector<Args> cmds{{"GET", k.fence},
                         {"ZCOUNT", k.readers, after(now_ms), "+inf"},
                         {"ZRANGEBYSCORE", k.readers, after(now_ms), "+inf", "WITHSCORES", "LIMIT",
                          "0", std::to_string(kListedReaders)},
                         {"ZRANGE", k.readers, "-1", "-1", "WITHSCORES"}};
  waiting_commands(k, now_ms, cmds);
  cmds.push_back(*removal::presence_command(keys, "lock", name));
  return another_round<lock::Status>(
      std::move(cmds), [k = std::move(k), now_ms](std::span<const Reply> r) {
        if (reply_integer(r[6].get()) == 0) return finished<lock::Status>(std::nullopt);
        lock::Status s;
        s.fence = reply_is_nil(r[0].get()) ? 0 : reply_integer(r[0].get());
        s.waiting = reply_integer(r[4].get()) + reply_integer(r[5].get());
        s.readers = reply_integer(r[1].get());
        auto live = scored(r[2]);
        auto last = scored(r[3]);
        if (s.readers <= 0 || live.empty() || last.empty()) {
          s.readers = 0;  // the last share lapsed between the reads: free
          return finished<lock::Status>(std::move(s));
        }
        s.held = true;
        s.mode = "shared";
        s.ttl_ms = std::max<std::int64_t>(0, last.front().second - now_ms);
        std::vector<std::string> tokens;
        std::vector<std::int64_t> deadlines;
        for (auto& [token, deadline] : live) {
          tokens.push_back(std::move(token));
          deadlines.push_back(deadline);
        }
        return with_readers(std::move(s), std::move(tokens), std::move(deadlines), k, now_ms);
      });
}

}  // namespace

std::int64_t server_ms(const redisReply* time_reply) {
  if (time_reply->type != REDIS_REPLY_ARRAY || time_reply->elements != 2) {
    throw Error(kServer, "unexpected reply to TIME");
  }
  return reply_integer(time_reply->element[0]) * 1000 +
         reply_integer(time_reply->element[1]) / 1000;
}

Holder holder_of(std::string_view record, std::int64_t now_ms) {
  auto sep = record.rfind('\x1f');
  if (sep == std::string_view::npos || sep + 1 == record.size()) return {};
  std::string_view digits = record.substr(sep + 1);
  std::int64_t at = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), at);
  if (ec != std::errc() || end != digits.data() + digits.size() || at < 0) return {};
  return {unpack(record.substr(0, sep)), at, since(at, now_ms)};
}

Reading<lock::Status> read_lock(const Keys& keys, const std::string& name, std::int64_t now_ms) {
  std::string hash = keys.object("lock", name);
  std::vector<Args> cmds{
      {"HMGET", hash, "token", "who", "acquired_at", "fence", "ended_at", "exit_code"},
      {"PTTL", hash},
      {"EXISTS", keys.aux("lock", name, "writers"), keys.aux("lock", name, "rwait")}};
  return another_round<lock::Status>(
      std::move(cmds), [&keys, name, now_ms](std::span<const Reply> r) {
        const redisReply* fields = array(r[0]);
        if (fields->elements != 6) throw Error(kServer, "unexpected reply to HMGET");
        std::int64_t pttl = reply_integer(r[1].get());
        bool has_token = !reply_is_nil(fields->element[0]);
        // PTTL -2: the hash ended (its lease ran out, or it was given back) after HMGET read
        // it; the lock is free now, and read as such.
        if (!has_token || pttl == -2) {
          if (pttl != -2 && !has_token) {
            throw foreign_key_error(keys.object("lock", name), "a hash that is not an rcoord lock");
          }
          return not_held(keys, name, LockKeys(keys, name), now_ms);
        }
        lock::Status s = exclusive(fields, pttl, now_ms);
        if (reply_integer(r[2].get()) == 0) return finished<lock::Status>(std::move(s));
        return waiters_of(keys, name, std::move(s), now_ms);
      });
}

// --- sem ----------------------------------------------------------------------------------------

Reading<semaphore::Status> read_sem(const Keys& keys, const std::string& name,
                                    std::int64_t now_ms) {
  std::string holders = keys.object("sem", name);
  std::string permits = keys.aux("sem", name, "permits");
  std::string who = keys.aux("sem", name, "who");
  std::vector<Args> cmds{{"ZRANGEBYSCORE", holders, after(now_ms), "+inf", "WITHSCORES"},
                         {"HGET", keys.aux("sem", name, "meta"), "limit"},
                         {"ZCOUNT", keys.aux("sem", name, "alive"), after(now_ms), "+inf"}};
  return another_round<semaphore::Status>(
      std::move(cmds), [&keys, name, permits, who, now_ms](std::span<const Reply> r) {
        semaphore::Status s;
        s.limit = counter_of(r[1].get());
        s.waiting = reply_integer(r[2].get());
        auto live = scored(r[0]);
        if (live.empty()) {
          if (!reply_is_nil(r[1].get()) || s.waiting > 0) {
            return finished<semaphore::Status>(std::move(s));
          }
          // Nothing but expired leases, or only what rm keeps: is anything left?
          return another_round<semaphore::Status>({*removal::presence_command(keys, "sem", name)},
                                                  [s = std::move(s)](std::span<const Reply> p) {
                                                    if (reply_integer(p[0].get()) == 0)
                                                      return finished<semaphore::Status>({});
                                                    return finished<semaphore::Status>(s);
                                                  });
        }
        Args counts{"HMGET", permits};
        Args takers{"HMGET", who};
        for (const auto& [token, deadline] : live) {
          counts.push_back(token);
          takers.push_back(token);
          s.holders.push_back({token, 1, deadline - now_ms, {}});
        }
        return another_round<semaphore::Status>(
            {std::move(counts), std::move(takers)},
            [s = std::move(s), now_ms](std::span<const Reply> h) {
              const redisReply* n = array(h[0]);
              const redisReply* t = array(h[1]);
              semaphore::Status out = s;
              for (std::size_t i = 0; i < out.holders.size(); ++i) {
                auto& holder = out.holders[i];
                if (i < n->elements) holder.permits = number_of(n->element[i]).value_or(1);
                if (i < t->elements) holder.taker = holder_of(reply_string(t->element[i]), now_ms);
                out.in_use += holder.permits;
              }
              return finished<semaphore::Status>(std::move(out));
            });
      });
}

// --- elect --------------------------------------------------------------------------------------

Reading<elect::Status> read_elect(const Keys& keys, const std::string& name, std::int64_t now_ms) {
  std::string leader = keys.object("elect", name);
  std::vector<Args> cmds{{"HMGET", leader, "id", "term", "who", "acquired_at"}, {"PTTL", leader}};
  return another_round<elect::Status>(
      std::move(cmds), [&keys, name, leader, now_ms](std::span<const Reply> r) {
        const redisReply* f = array(r[0]);
        if (f->elements != 4) throw Error(kServer, "unexpected reply to HMGET");
        std::int64_t pttl = reply_integer(r[1].get());
        if (!reply_is_nil(f->element[0]) && pttl != -2) {
          elect::Status s;
          s.id = reply_string(f->element[0]);
          s.leader = !s.id.empty();
          s.term = counter_of(f->element[1]);
          s.ttl_ms = std::max<std::int64_t>(0, pttl);
          std::int64_t at = number_of(f->element[3]).value_or(-1);
          s.holder = {unpack(reply_string(f->element[2])), at, since(at, now_ms)};
          return finished<elect::Status>(std::move(s));
        }
        if (pttl != -2) throw foreign_key_error(leader, "a hash that is not an rcoord election");
        // No leader (or its lease ended after HMGET read it): the last term.
        return another_round<elect::Status>({{"GET", keys.aux("elect", name, "term")},
                                             *removal::presence_command(keys, "elect", name)},
                                            [](std::span<const Reply> t) {
                                              if (reply_integer(t[1].get()) == 0)
                                                return finished<elect::Status>({});
                                              elect::Status s;
                                              s.term = counter_of(t[0].get());
                                              return finished<elect::Status>(std::move(s));
                                            });
      });
}

// --- queue --------------------------------------------------------------------------------------

namespace {

// Whether a lapsed lease's message goes to the dead set: its record `deliveries/max` says
// that delivery was the last one allowed (the queue scripts' promote()).
bool last_delivery(std::string_view record) {
  auto slash = record.find('/');
  if (slash == std::string_view::npos) return false;
  std::int64_t n = 0;
  std::int64_t max = 0;
  auto [e1, c1] = std::from_chars(record.data(), record.data() + slash, n);
  auto [e2, c2] = std::from_chars(record.data() + slash + 1, record.data() + record.size(), max);
  if (c1 != std::errc() || c2 != std::errc() || e1 != record.data() + slash ||
      e2 != record.data() + record.size()) {
    return false;
  }
  return max > 0 && n >= max;
}

}  // namespace

Reading<queue::Stats> read_queue(const Keys& keys, const std::string& name, std::int64_t now_ms) {
  std::string delayed = keys.aux("queue", name, "delayed");
  std::string inflight = keys.aux("queue", name, "inflight");
  std::vector<Args> cmds{{"LLEN", keys.aux("queue", name, "ready")},
                         {"ZCARD", delayed},
                         {"ZCARD", inflight},
                         {"ZCARD", keys.aux("queue", name, "dead")}};
  return another_round<queue::Stats>(
      std::move(cmds), [&keys, name, delayed, inflight, now_ms](std::span<const Reply> r) {
        queue::Stats s{reply_integer(r[0].get()), reply_integer(r[1].get()),
                       reply_integer(r[2].get()), reply_integer(r[3].get())};
        if (s.delayed == 0 && s.in_flight == 0) {
          if (s.ready > 0 || s.dead > 0) return finished<queue::Stats>(s);
          return another_round<queue::Stats>({*removal::presence_command(keys, "queue", name)},
                                             [s](std::span<const Reply> p) {
                                               if (reply_integer(p[0].get()) == 0) {
                                                 return finished<queue::Stats>({});
                                               }
                                               return finished<queue::Stats>(s);
                                             });
        }
        // What is due: delayed messages whose time came, leases that ran out.
        std::string now = std::to_string(now_ms);
        std::vector<Args> due{
            {"ZCOUNT", delayed, "-inf", now},
            {"ZCOUNT", inflight, "-inf", now},
            {"ZRANGEBYSCORE", inflight, "-inf", now, "LIMIT", "0", std::to_string(kLapsedRead)}};
        std::string attempts = keys.aux("queue", name, "attempts");
        return another_round<queue::Stats>(std::move(due), [s, attempts](std::span<const Reply> d) {
          queue::Stats out = s;
          std::int64_t due_delayed = std::min(out.delayed, reply_integer(d[0].get()));
          std::int64_t lapsed = std::min(out.in_flight, reply_integer(d[1].get()));
          out.delayed -= due_delayed;
          out.in_flight -= lapsed;
          out.ready += due_delayed + lapsed;  // the lapsed ones of a last delivery move on below
          const redisReply* ids = array(d[2]);
          if (ids->elements == 0) return finished<queue::Stats>(out);
          Args hmget{"HMGET", attempts};
          for (std::size_t i = 0; i < ids->elements; ++i)
            hmget.push_back(reply_string(ids->element[i]));
          return another_round<queue::Stats>({std::move(hmget)}, [out](std::span<const Reply> a) {
            queue::Stats last = out;
            const redisReply* records = array(a[0]);
            for (std::size_t i = 0; i < records->elements; ++i) {
              if (last.ready > 0 && last_delivery(reply_string(records->element[i]))) {
                --last.ready;
                ++last.dead;
              }
            }
            return finished<queue::Stats>(last);
          });
        });
      });
}

// --- latch --------------------------------------------------------------------------------------

Reading<latch::Status> read_latch(const Keys& keys, const std::string& name, std::int64_t) {
  std::string key = keys.object("latch", name);
  return another_round<latch::Status>({{"HGET", key, "count"}}, [key](std::span<const Reply> r) {
    if (!reply_is_nil(r[0].get())) {
      latch::Status s;
      s.found = true;
      s.count = reply_integer(r[0].get());
      return finished<latch::Status>(std::move(s));
    }
    // No count: no latch, or a hash someone else keeps under its name.
    return another_round<latch::Status>({{"EXISTS", key}}, [key](std::span<const Reply> e) {
      if (reply_integer(e[0].get()) != 0) {
        throw foreign_key_error(key, "a hash that is not an rcoord latch");
      }
      return finished<latch::Status>(latch::Status{});
    });
  });
}

}  // namespace rcoord::inventory::reads

namespace rcoord::inventory {
namespace {

std::string short_token(const std::string& token) {
  return token.size() > 8 ? token.substr(0, 8) + "…" : token;
}

double gauge_of(std::int64_t v) { return static_cast<double>(v); }

// `backup@web-3` of a holder whose take recorded who it was, else the token's start.
std::string holder_name(const Holder& h, const std::string& token) {
  if (!h.known()) return short_token(token);
  return h.who.user + "@" + h.who.host;
}

// `held by backup@web-3 (pid 4242, backup.sh) for 14m30s, expires in 19.4s` (SPEC §5), or
// as much of it as the take recorded.
std::string held_by(const Holder& h, const std::string& token, std::int64_t ttl_ms) {
  std::string who = h.known() ? describe(h.who) : short_token(token);
  std::string out = "held by " + who;
  if (h.held_ms >= 0) out += " for " + format_elapsed(Millis(h.held_ms));
  return out + ", expires in " + format_elapsed(Millis(ttl_ms));
}

// `; kept: its command ended 5m ago (exit 0)`: a `lock run --min-hold` whose holder is gone.
std::string kept_since(const lock::Kept& k) {
  std::string out = "; kept: its command ended";
  if (k.ended_ms >= 0) out += " " + format_elapsed(Millis(k.ended_ms)) + " ago";
  if (k.exit_code) out += fmt::format(" (exit {})", *k.exit_code);
  return out;
}

// `; 2 kept after their command ended` of a shared lock's listed readers, or nothing.
std::string readers_kept(const lock::Status& s) {
  auto kept = std::count_if(s.reader_list.begin(), s.reader_list.end(),
                            [](const lock::Reader& r) { return r.kept.kept(); });
  if (kept == 0) return {};
  return fmt::format("; {} kept after {} command ended", kept, kept == 1 ? "its" : "their");
}

}  // namespace

void show_lock(Object& o, const lock::Status& s) {
  if (s.mode == "exclusive") {
    o.state = fmt::format("{}, fence {}", held_by(s.holder, s.token, s.ttl_ms), s.fence);
    if (s.kept.kept()) o.state += kept_since(s.kept);
    o.holder = holder_name(s.holder, s.token);
    o.ttl_ms = s.ttl_ms;
    o.age_ms = s.held_ms;
    o.fingerprint = fmt::format("held {} {}", s.token, s.fence);
  } else if (s.mode == "shared") {
    o.state = fmt::format("shared by {} reader(s) for up to {}, fence {}{}", s.readers,
                          format_elapsed(Millis(s.ttl_ms)), s.fence, readers_kept(s));
    o.holder = fmt::format("{} reader(s)", s.readers);
    o.ttl_ms = s.ttl_ms;
    o.fingerprint = fmt::format("shared {} {}", s.readers, s.fence);
  } else {
    o.state = fmt::format("free, last fence {}", s.fence);
    o.fingerprint = fmt::format("free {}", s.fence);
  }
  o.waiting = s.waiting;
  o.fingerprint += fmt::format(" waiting {}", s.waiting);
  o.gauges.push_back({"rcoord_lock_held", "", s.held ? 1.0 : 0.0});
  if (s.mode == "exclusive" && s.held_ms >= 0) {
    o.gauges.push_back({"rcoord_lock_held_seconds", "", gauge_of(s.held_ms) / 1000});
  }
  o.gauges.push_back({"rcoord_lock_fence", "", gauge_of(s.fence)});
  o.gauges.push_back({"rcoord_lock_waiting", "", gauge_of(s.waiting)});
}

void show_sem(Object& o, const semaphore::Status& s) {
  o.state = fmt::format("{} of {} permit(s) in use by {} holder(s), {} waiting", s.in_use, s.limit,
                        s.holders.size(), s.waiting);
  if (s.holders.size() == 1) {
    const auto& only = s.holders.front();
    o.holder = holder_name(only.taker, only.token);
    o.state += ", " + held_by(only.taker, only.token, only.ttl_ms);
  } else if (!s.holders.empty()) {
    o.holder = fmt::format("{} holders", s.holders.size());
  }
  o.waiting = s.waiting;
  std::vector<std::string> tokens;
  for (const auto& h : s.holders) {
    // The soonest lease to end: when a permit comes back if nobody gives it back sooner.
    o.ttl_ms = o.ttl_ms < 0 ? h.ttl_ms : std::min(o.ttl_ms, h.ttl_ms);
    tokens.push_back(fmt::format("{}:{}", h.token, h.permits));
  }
  std::sort(tokens.begin(), tokens.end());
  o.fingerprint = fmt::format("{} {} {} {}", s.limit, s.in_use, s.waiting, fmt::join(tokens, ","));
  o.gauges.push_back({"rcoord_sem_permits_in_use", "", gauge_of(s.in_use)});
  o.gauges.push_back({"rcoord_sem_limit", "", gauge_of(s.limit)});
  o.gauges.push_back({"rcoord_sem_waiting", "", gauge_of(s.waiting)});
}

void show_elect(Object& o, const elect::Status& s) {
  if (s.leader) {
    o.state =
        fmt::format("led by {}, term {}, {} left", s.id, s.term, format_elapsed(Millis(s.ttl_ms)));
    if (s.holder.known()) {
      o.state = fmt::format("led by {}: {} for {}, term {}, expires in {}", s.id,
                            describe(s.holder.who), format_elapsed(Millis(s.holder.held_ms)),
                            s.term, format_elapsed(Millis(s.ttl_ms)));
    }
    o.holder = s.id;
    o.ttl_ms = s.ttl_ms;
  } else {
    o.state = fmt::format("no leader, last term {}", s.term);
  }
  o.fingerprint = fmt::format("{} {}", s.id, s.term);
  o.gauges.push_back({"rcoord_elect_has_leader", "", s.leader ? 1.0 : 0.0});
  o.gauges.push_back({"rcoord_elect_term", "", gauge_of(s.term)});
}

void show_queue(Object& o, const queue::Stats& s) {
  o.state = fmt::format("ready {}, delayed {}, in flight {}, dead {}", s.ready, s.delayed,
                        s.in_flight, s.dead);
  o.fingerprint = o.state;
  o.gauges.push_back({"rcoord_queue_messages", "ready", gauge_of(s.ready)});
  o.gauges.push_back({"rcoord_queue_messages", "delayed", gauge_of(s.delayed)});
  o.gauges.push_back({"rcoord_queue_messages", "in_flight", gauge_of(s.in_flight)});
  o.gauges.push_back({"rcoord_queue_messages", "dead", gauge_of(s.dead)});
}

void show_latch(Object& o, const latch::Status& s) {
  if (!s.found) {
    o.state = "gone";
  } else {
    o.state = s.count == 0 ? "open (count 0)" : fmt::format("count {}", s.count);
    o.gauges.push_back({"rcoord_latch_remaining", "", gauge_of(s.count)});
  }
  o.fingerprint = o.state;
}

}  // namespace rcoord::inventory
