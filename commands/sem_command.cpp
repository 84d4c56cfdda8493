#include "sem_command.hpp"

#include <fmt/format.h>

#include "errors.hpp"
#include "executable.hpp"
#include "hold.hpp"
#include "holder_view.hpp"
#include "text.hpp"
#include "token.hpp"
#include "watch.hpp"

namespace rcoord::semaphore {

void to_json(nlohmann::ordered_json& j, const Taken& r) {
  j = {{"acquired", r.acquired}, {"name", r.name}};
  if (r.acquired) j["token"] = r.token;
  j["limit"] = r.limit;
  if (r.acquired) j["permits"] = r.permits;
  j["holders"] = r.holders;
  j["in_use"] = r.in_use;
  if (r.acquired) j["ttl_ms"] = r.ttl_ms;
  j["waited_ms"] = r.waited_ms;
}
std::string to_text(const Taken& r) { return r.acquired ? r.token : std::string{}; }

void to_json(nlohmann::ordered_json& j, const Status& r) {
  auto holders = nlohmann::ordered_json::array();
  for (const auto& h : r.holders) {
    nlohmann::ordered_json one = {{"token", h.token}, {"permits", h.permits}, {"ttl_ms", h.ttl_ms}};
    cmd::add_holder(one, h.taker);
    holders.push_back(std::move(one));
  }
  j = {{"name", r.name},
       {"limit", r.limit},
       {"in_use", r.in_use},
       {"waiting", r.waiting},
       {"holders", holders}};
}
std::string to_text(const Status& r) {
  // field: value lines with the JSON names; the holders list is one `holders:` line each.
  std::string out = fmt::format("name: {}\nlimit: {}\nin_use: {}\nwaiting: {}\n",
                                escape_text(r.name), r.limit, r.in_use, r.waiting);
  for (const auto& h : r.holders) {
    out +=
        fmt::format("holders: {} permits={} ttl_ms={}", escape_text(h.token), h.permits, h.ttl_ms);
    out += cmd::holder_suffix(h.taker) + '\n';
  }
  return out;
}

void to_json(nlohmann::ordered_json& j, const Changed& r) {
  j = {{r.verb, r.done}, {"name", r.name}};
  if (r.verb == "refreshed") j["ttl_ms"] = r.ttl_ms;
}
std::string to_text(const Changed& r) {
  if (!r.done) return {};
  return r.verb == "refreshed" ? fmt::format("ttl_ms: {}", r.ttl_ms) : r.verb;
}

void to_json(nlohmann::ordered_json& j, const Freed& r) {
  j = {{"free", r.free},          {"name", r.name},     {"limit", r.limit},
       {"permits", r.permits},    {"in_use", r.in_use}, {"holders", r.holders},
       {"waited_ms", r.waited_ms}};
}
// As `latch wait`: the exit code says it all.
std::string to_text(const Freed&) { return {}; }

}  // namespace rcoord::semaphore

namespace rcoord::cmd {
namespace {

struct SemArgs {
  std::string name;
  std::int64_t limit = 0;
  std::int64_t permits = 1;
  Millis ttl{30'000};
  std::optional<Millis> wait;  // nullopt: try once
  std::string token;
  Conflict conflict;
  std::optional<Millis> kill_grace;  // nullopt: the default for the TTL
  std::optional<Millis> max_run;     // nullopt: no limit
  std::optional<Millis> watch;
  std::vector<std::string> command;
};

semaphore::TakeOptions take_options(const Context& ctx, const SemArgs& a) {
  semaphore::TakeOptions opts;
  opts.limit = a.limit;
  opts.permits = a.permits;
  opts.ttl = a.ttl;
  opts.wait = a.wait;
  opts.token = a.token.empty() ? random_token() : a.token;
  opts.who = a.command.empty() ? ctx.who() : ctx.who_runs(a.command);
  return opts;
}

std::string sem_what(const std::string& name) { return fmt::format("semaphore '{}'", name); }

Holding sem_holding(Context& ctx, const std::string& name, const std::string& token) {
  return {sem_what(name),
          [&ctx, name, token] { semaphore::release(ctx.conn(), ctx.keys(), name, token); }};
}

semaphore::Taken take_or_abort(Context& ctx, const SemArgs& a, const semaphore::TakeOptions& opts) {
  return cmd::take_or_abort(ctx, sem_holding(ctx, a.name, opts.token),
                            [&] { return semaphore::take(ctx.conn(), ctx.keys(), a.name, opts); });
}

void note_full(Context& ctx, const semaphore::Taken& r, std::int64_t permits) {
  if (r.in_use + permits <= r.limit && r.ahead > 0) {
    ctx.out().note(
        fmt::format("rcoord: semaphore '{}' has room, but {} earlier waiter(s) come "
                    "first ({} of {} permits in use)",
                    r.name, r.ahead, r.in_use, r.limit));
    return;
  }
  ctx.out().note(fmt::format("rcoord: semaphore '{}' is full ({} of {} permits in use)", r.name,
                             r.in_use, r.limit));
}

int run_take(Context& ctx, const SemArgs& a) {
  auto opts = take_options(ctx, a);
  auto r = take_or_abort(ctx, a, opts);
  emit_taken(ctx, sem_holding(ctx, a.name, opts.token), r);
  if (!r.acquired) note_full(ctx, r, opts.permits);
  return r.acquired ? kYes : kNo;
}

int run_release(Context& ctx, const SemArgs& a) {
  semaphore::Changed r{"released", semaphore::release(ctx.conn(), ctx.keys(), a.name, a.token),
                       a.name};
  emit_made(ctx, r, r.done ? fmt::format("semaphore '{}': released", a.name) : "");
  if (!r.done)
    ctx.out().note(fmt::format("rcoord: semaphore '{}': this token holds no permit", a.name));
  return r.done ? kYes : kNo;
}

int run_refresh(Context& ctx, const SemArgs& a) {
  const Millis ttl = a.ttl;
  semaphore::Changed r{"refreshed",
                       semaphore::refresh(ctx.conn(), ctx.keys(), a.name, a.token, ttl), a.name,
                       ttl.count()};
  emit_made(ctx, r, r.done ? fmt::format("semaphore '{}': refreshed", a.name) : "");
  if (!r.done)
    ctx.out().note(fmt::format("rcoord: semaphore '{}': this token holds no permit", a.name));
  return r.done ? kYes : kNo;
}

int run_status(Context& ctx, const SemArgs& a) {
  return run_watched(ctx, a.watch, [&] {
    auto r = semaphore::status(ctx.conn(), ctx.keys(), a.name);
    ctx.out().emit(r);
    return r.holders.empty() ? kNo : kYes;
  });
}

int run_wait(Context& ctx, const SemArgs& a) {
  signals::install();
  auto r = semaphore::wait_free(ctx.conn(), ctx.keys(), a.name, a.limit, a.permits, a.wait);
  ctx.out().emit(r);
  if (!r.free) {
    ctx.out().note(
        fmt::format("rcoord: semaphore '{}' still has {} of {} permits in use ({} wanted free)",
                    a.name, r.in_use, r.limit, a.permits));
  }
  return r.free ? kYes : kNo;
}

int run_run(Context& ctx, const SemArgs& a) {
  check_executable(a.command.front());  // before a permit is taken
  auto opts = take_options(ctx, a);
  Millis kill_grace = run_kill_grace(ctx, a.kill_grace, opts.ttl);
  start_guard_if_waiting(ctx, a.wait, opts.ttl, kill_grace);
  if (a.wait) {
    notify_waiting([&] {
      auto s = semaphore::status(ctx.conn(), ctx.keys(), a.name);
      return fmt::format("waiting for {} of {} permits of semaphore '{}' ({} in use, {} waiting)",
                         a.permits, a.limit, a.name, s.in_use, s.waiting);
    });
  }
  auto r = take_or_abort(ctx, a, opts);
  if (!r.acquired) {
    ctx.out().emit(r);  // JSON: the full object; text: nothing (stdout is the command's)
    if (a.conflict.say()) note_full(ctx, r, opts.permits);
    return a.conflict.exit_code;
  }
  if (a.conflict.verbose) {
    ctx.out().note(fmt::format(
        "rcoord: took {} of {} permits of semaphore '{}' after {}; running {}", r.permits, r.limit,
        a.name, format_elapsed(Millis(r.waited_ms)), a.command.front()));
  }
  Lease lease = semaphore::lease(ctx.conn(), ctx.keys(), r, opts.ttl);
  HoldingOptions options{{a.command,
                          {{"RCOORD_TOKEN", r.token},
                           {"RCOORD_SEM", a.name},
                           {"RCOORD_PERMITS", std::to_string(r.permits)}},
                          kill_grace}};
  options.supervise.max_run = a.max_run;
  return run_supervised(ctx, sem_what(a.name), lease, options);
}

void add_take_options(CLI::App* verb, SemArgs& a) {
  verb->add_option("--limit", a.limit, "How many permits exist (every user of NAME must agree)")
      ->required()
      ->type_name("N")
      ->transform(decimal_in(1, 1'000'000'000));
  verb->add_option("--permits", a.permits, "Take K permits at once, all or none (default 1)")
      ->type_name("K")
      ->transform(decimal_in(1, 1'000'000'000));
  add_duration(verb, "--ttl", a.ttl, "Lease of the permits (default 30s)", positive("30s"));
  add_wait(verb, "-w,--wait", a.wait,
           "Wait up to DUR (or forever), in arrival order; default: try once");
  verb->add_option("--token", a.token, "Use this token instead of a random one");
}

}  // namespace

void add_sem(CLI::App& app, Context& ctx) {
  auto* sem = app.add_subcommand("sem", "Counting semaphores: at most N holders at once");
  sem->require_subcommand(1);
  sem->footer("Example: rcoord sem run encoders --limit 4 --wait forever -- ./encode.sh");

  auto take = std::make_shared<SemArgs>();
  auto* t = sem->add_subcommand("take", "Take permits and print the holder token");
  t->add_option("name", take->name, "Semaphore name")->required();
  add_take_options(t, *take);
  t->footer("Example: TOKEN=$(rcoord sem take encoders --limit 4 --wait 5m) || exit 1");
  on_parse(t, ctx, take, run_take);

  auto rel = std::make_shared<SemArgs>();
  auto* r = sem->add_subcommand("release", "Give back the permits held by TOKEN");
  r->add_option("name", rel->name, "Semaphore name")->required();
  r->add_option("--token", rel->token, "The holder's token (default $RCOORD_TOKEN)")
      ->envname("RCOORD_TOKEN")
      ->required();
  r->footer("Example: rcoord sem release encoders --token \"$TOKEN\"");
  on_parse(r, ctx, rel, run_release);

  auto ref = std::make_shared<SemArgs>();
  auto* f = sem->add_subcommand("refresh", "Extend the lease of the permits held by TOKEN");
  f->add_option("name", ref->name, "Semaphore name")->required();
  f->add_option("--token", ref->token, "The holder's token (default $RCOORD_TOKEN)")
      ->envname("RCOORD_TOKEN")
      ->required();
  add_duration(f, "--ttl", ref->ttl, "New lease from now (default 30s)", positive("30s"));
  f->footer("Example: rcoord sem refresh encoders --token \"$TOKEN\" --ttl 1m");
  on_parse(f, ctx, ref, run_refresh);

  auto st = std::make_shared<SemArgs>();
  auto* s = sem->add_subcommand("status", "Show the holders, their permits and leases");
  s->add_option("name", st->name, "Semaphore name")->required();
  add_watch_option(s, st->watch);
  s->footer("Example: rcoord sem status encoders --json");
  on_parse(s, ctx, st, run_status);

  auto wt = std::make_shared<SemArgs>();
  wt->wait = Millis::max();
  auto* w = sem->add_subcommand("wait", "Wait until K permits are free, without taking any");
  w->add_option("name", wt->name, "Semaphore name")->required();
  w->add_option("--limit", wt->limit, "How many permits exist (as its takers give it)")
      ->required()
      ->type_name("N")
      ->transform(decimal_in(1, 1'000'000'000));
  w->add_option("--permits", wt->permits, "Wait until K permits are free (default 1)")
      ->type_name("K")
      ->transform(decimal_in(1, 1'000'000'000));
  add_wait(w, "-w,--wait", wt->wait,
           "Wait up to DUR (or forever), then exit 1 (default: forever; 0: look once)");
  w->footer(
      "Example: rcoord sem wait encoders --limit 4 --permits 2 --wait 5m && ./report.sh\n"
      "Woken by the release that frees them; it queues for nothing, so queued takers may\n"
      "have taken them again when this returns.");
  on_parse(w, ctx, wt, run_wait);

  auto run = std::make_shared<SemArgs>();
  auto* x = sem->add_subcommand("run", "Run a command while holding permits");
  x->add_option("name", run->name, "Semaphore name")->required();
  add_take_options(x, *run);
  add_conflict_options(x, run->conflict, "no permit is free");
  add_duration(x, "--kill-grace", run->kill_grace,
               "On permit loss, SIGKILL the command this long after SIGTERM (default: 10s or "
               "TTL/3, whichever is shorter)");
  add_max_run_option(x, run->max_run,
                     "Stop the command if it runs longer than DUR (SIGTERM, SIGKILL after "
                     "--kill-grace), give the permits back and exit 124");
  x->add_option("command", run->command, "The command and its arguments, after --")->required();
  x->footer(
      "Example: rcoord sem run encoders --limit 4 --wait forever -- ffmpeg -i in.mov out.mp4\n"
      "         rcoord sem run encoders --limit 4 --max-run 1h -- ./encode.sh   # 124: too long\n"
      "The command gets RCOORD_TOKEN, RCOORD_SEM and RCOORD_PERMITS in its environment.\n"
      "Under systemd ($NOTIFY_SOCKET) it sends STATUS=, READY=1, WATCHDOG=1 and STOPPING=1;\n"
      "a W3C $TRACEPARENT goes into its history events and on to the command.");
  on_parse(x, ctx, run, run_run);
}

}  // namespace rcoord::cmd
