#include "redlock_command.hpp"

#include <fmt/format.h>

#include <chrono>

#include "errors.hpp"
#include "hold.hpp"
#include "holding.hpp"
#include "lock_command.hpp"
#include "token.hpp"
#include "watch.hpp"

namespace rcoord::redlock {
namespace {

void add_votes(nlohmann::ordered_json& j, const Votes& v) {
  j["nodes"] = v.nodes;
  j["quorum"] = v.quorum;
  j["acquired_on"] = v.acquired_on;
  j["validity_ms"] = v.validity_ms;
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const Acquired& r) {
  lock::to_json(j, r.lock);
  add_votes(j, r.votes);
}
std::string to_text(const Acquired& r) { return lock::to_text(r.lock); }

void to_json(nlohmann::ordered_json& j, const Released& r) {
  j = {{"released", r.released},
       {"name", r.name},
       {"nodes", r.nodes},
       {"quorum", r.quorum},
       {"released_on", r.released_on}};
}
std::string to_text(const Released& r) { return r.released ? "released" : ""; }

void to_json(nlohmann::ordered_json& j, const Extended& r) {
  lock::to_json(j, r.lock);
  add_votes(j, r.votes);
}
std::string to_text(const Extended& r) {
  return r.lock.extended
             ? fmt::format("ttl_ms: {}\nvalidity_ms: {}", r.lock.ttl_ms, r.votes.validity_ms)
             : std::string{};
}

void to_json(nlohmann::ordered_json& j, const Status& r) {
  lock::to_json(j, r.lock);
  add_votes(j, r.votes);
}
std::string to_text(const Status& r) {
  return lock::to_text(r.lock) +
         fmt::format("nodes: {}\nquorum: {}\nacquired_on: {}\nvalidity_ms: {}\n", r.votes.nodes,
                     r.votes.quorum, r.votes.acquired_on, r.votes.validity_ms);
}

void to_json(nlohmann::ordered_json& j, const Broken& r) {
  lock::to_json(j, r.lock);
  j["nodes"] = r.nodes;
  j["broken_on"] = r.broken_on;
}
std::string to_text(const Broken& r) { return lock::to_text(r.lock); }

}  // namespace rcoord::redlock

namespace rcoord::cmd::redlock_verbs {
namespace {

constexpr Millis kDefaultTtl{30'000};

redlock::Redlock make(const Context& ctx, Millis ttl) {
  const Settings& s = ctx.settings();
  return {s.endpoints, redlock::node_timeout(s.timeout, ttl), ctx.keys()};
}

// As on one server (lock_command.cpp): who holds it, read from a quorum of the masters.
void note_busy(Context& ctx, redlock::Redlock& rl, const std::string& name) {
  if (ctx.out().quiet() || ctx.out().json()) return;
  std::string holder = lock::busy_text(rl.status(name).lock, local_clock);
  ctx.out().note(fmt::format("rcoord: lock '{}' is busy{}", name,
                             holder.empty() ? " (free again already: try again)" : ": " + holder));
}

void note_not_held(Context& ctx, const std::string& name) {
  ctx.out().note(fmt::format("rcoord: lock '{}' is not held by this token", name));
}

std::string lock_what(const std::string& name) { return fmt::format("lock '{}'", name); }

Holding holding(redlock::Redlock& rl, const std::string& name, const std::string& token) {
  return {lock_what(name), [&rl, name, token] { rl.release(name, token); }};
}

}  // namespace

bool active(const Context& ctx) { return ctx.settings().endpoints.size() >= 3; }

int acquire(Context& ctx, const std::string& name, lock::AcquireOptions opts) {
  if (opts.token.empty()) opts.token = random_token();
  auto rl = make(ctx, opts.ttl);
  Holding held = holding(rl, name, opts.token);
  auto r = take_or_abort(ctx, held, [&] { return rl.acquire(name, opts); });
  emit_taken(ctx, held, r, !r.lock.refreshed);
  if (!r.lock.acquired) note_busy(ctx, rl, name);
  return r.lock.acquired ? kYes : kNo;
}

int release(Context& ctx, const std::string& name, const std::string& token) {
  auto r = make(ctx, kDefaultTtl).release(name, token);
  emit_made(ctx, r, r.released ? fmt::format("lock '{}': released", name) : "");
  if (!r.released) note_not_held(ctx, name);
  return r.released ? kYes : kNo;
}

int extend(Context& ctx, const std::string& name, const std::string& token, Millis ttl) {
  auto r = make(ctx, ttl).extend(name, token, ttl);
  emit_made(ctx, r, r.lock.extended ? fmt::format("lock '{}': extended", name) : "");
  if (!r.lock.extended) note_not_held(ctx, name);
  return r.lock.extended ? kYes : kNo;
}

int status(Context& ctx, const std::string& name, std::optional<Millis> watch) {
  auto rl = make(ctx, kDefaultTtl);
  return run_watched(ctx, watch, [&] {
    auto r = rl.status(name);
    ctx.out().emit(r);
    return r.lock.held ? kYes : kNo;
  });
}

int break_lock(Context& ctx, const std::string& name) {
  auto r = make(ctx, kDefaultTtl).break_lock(name);
  emit_made(ctx, r, r.lock.broken ? fmt::format("lock '{}': broken", name) : "");
  if (!r.lock.broken) ctx.out().note(fmt::format("rcoord: lock '{}' was not held", name));
  return r.lock.broken ? kYes : kNo;
}

int run(Context& ctx, const std::string& name, RunOptions opts) {
  if (opts.acquire.token.empty()) opts.acquire.token = random_token();
  Millis ttl = opts.acquire.ttl;
  auto rl = make(ctx, ttl);
  auto r = take_or_abort(ctx, holding(rl, name, opts.acquire.token),
                         [&] { return rl.acquire(name, opts.acquire); });
  if (!r.lock.acquired) {
    ctx.out().emit(r);  // JSON: the busy object; text: nothing (stdout is the command's)
    if (opts.conflict.say()) note_busy(ctx, rl, name);
    return opts.conflict.exit_code;
  }
  Lease lease = rl.lease(r, ttl);
  HoldingOptions options{{opts.command,
                          {{"RCOORD_TOKEN", r.lock.token},
                           {"RCOORD_FENCE", std::to_string(r.lock.fence)},
                           {"RCOORD_LOCK", name}},
                          opts.kill_grace}};
  options.supervise.max_run = opts.max_run;
  options.min_hold = opts.min_hold;
  return run_supervised(ctx, lock_what(name), lease, options);
}

}  // namespace rcoord::cmd::redlock_verbs
