#include "lock_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>

#include "errors.hpp"
#include "executable.hpp"
#include "hold.hpp"
#include "holder_view.hpp"
#include "holding.hpp"
#include "lock_target.hpp"
#include "signals.hpp"
#include "text.hpp"
#include "token.hpp"
#include "watch.hpp"

namespace rcoord::lock {

namespace {

// A Redlock's votes: the nodes, the quorum, and on how many nodes it is; with validity_ms for
// a take (acquire, extend, status).
void add_votes(nlohmann::ordered_json& j, const std::optional<Votes>& v) {
  if (!v) return;
  j["nodes"] = v->nodes;
  j["quorum"] = v->quorum;
  j["acquired_on"] = v->acquired_on;
  j["validity_ms"] = v->validity_ms;
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const Acquired& r) {
  if (r.acquired) {
    j = {{"acquired", true},   {"name", r.name},   {"token", r.token},
         {"ttl_ms", r.ttl_ms}, {"fence", r.fence}, {"waited_ms", r.waited_ms}};
  } else {
    j = {{"acquired", false}, {"name", r.name}, {"ttl_ms", r.ttl_ms}};
  }
  add_votes(j, r.votes);
}
std::string to_text(const Acquired& r) { return r.acquired ? r.token : std::string{}; }

void to_json(nlohmann::ordered_json& j, const Released& r) {
  j = {{"released", r.released}, {"name", r.name}};
  if (r.votes) {
    j["nodes"] = r.votes->nodes;
    j["quorum"] = r.votes->quorum;
    j["released_on"] = r.votes->acquired_on;
  }
}
std::string to_text(const Released& r) { return r.released ? "released" : ""; }

void to_json(nlohmann::ordered_json& j, const Extended& r) {
  j = {{"extended", r.extended}, {"name", r.name}, {"ttl_ms", r.ttl_ms}, {"fence", r.fence}};
  add_votes(j, r.votes);
}
std::string to_text(const Extended& r) {
  if (!r.extended) return {};
  if (r.votes) return fmt::format("ttl_ms: {}\nvalidity_ms: {}", r.ttl_ms, r.votes->validity_ms);
  return fmt::format("ttl_ms: {}", r.ttl_ms);
}

namespace {

// ended_at and exit_code of a take kept by --min-hold after its command ended.
void add_kept(nlohmann::ordered_json& j, const Kept& k) {
  if (k.kept()) j["ended_at"] = rfc3339(k.ended_at);
  if (k.exit_code) j["exit_code"] = *k.exit_code;
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const Status& r) {
  j = {{"held", r.held},   {"name", r.name}, {"token", r.token},    {"ttl_ms", r.ttl_ms},
       {"fence", r.fence}, {"mode", r.mode}, {"readers", r.readers}};
  if (r.mode == "exclusive") {
    cmd::add_holder(j, r.holder);
    add_kept(j, r.kept);
  }
  if (r.mode == "shared") {
    auto& holders = j["holders"] = nlohmann::ordered_json::array();
    for (const auto& reader : r.reader_list) {
      nlohmann::ordered_json one = {{"token", reader.token}, {"ttl_ms", reader.ttl_ms}};
      cmd::add_holder(one, reader.holder);
      add_kept(one, reader.kept);
      holders.push_back(std::move(one));
    }
  }
  add_votes(j, r.votes);
}
std::string to_text(const Status& r) {
  std::string out = fmt::format(
      "held: {}\nname: {}\ntoken: {}\nttl_ms: {}\nfence: {}\nmode: {}\nreaders: {}\n", r.held,
      escape_text(r.name), escape_text(r.token), r.ttl_ms, r.fence, r.mode, r.readers);
  if (r.mode == "exclusive") {
    out += cmd::holder_lines(r.holder);
    if (r.kept.kept()) out += fmt::format("ended_at: {}\n", rfc3339(r.kept.ended_at));
    if (r.kept.exit_code) out += fmt::format("exit_code: {}\n", *r.kept.exit_code);
  }
  // One line per reader, as sem status lists its holders: its token, lease, since when (and
  // when its command ended, if it is only kept), who.
  for (const auto& reader : r.reader_list) {
    out += fmt::format("reader: {} ttl_ms={}", escape_text(reader.token), reader.ttl_ms);
    if (reader.kept.kept()) out += " ended_at=" + rfc3339(reader.kept.ended_at);
    if (reader.kept.exit_code) out += fmt::format(" exit_code={}", *reader.kept.exit_code);
    out += cmd::holder_suffix(reader.holder) + '\n';
  }
  if (r.votes) {
    out += fmt::format("nodes: {}\nquorum: {}\nacquired_on: {}\nvalidity_ms: {}\n", r.votes->nodes,
                       r.votes->quorum, r.votes->acquired_on, r.votes->validity_ms);
  }
  return out;
}

void to_json(nlohmann::ordered_json& j, const Broken& r) {
  j = {{"broken", r.broken}, {"name", r.name}, {"token", r.token}, {"readers", r.readers}};
  if (r.votes) {
    j["nodes"] = r.votes->nodes;
    j["broken_on"] = r.votes->acquired_on;
  }
}
std::string to_text(const Broken& r) {
  if (!r.broken) return {};
  if (r.readers > 0) return fmt::format("broken: {} readers", r.readers);
  return fmt::format("broken: {}", escape_text(r.token));
}

void to_json(nlohmann::ordered_json& j, const Freed& r) {
  j = {{"free", r.free}, {"name", r.name}};
  if (!r.free) j["ttl_ms"] = r.ttl_ms;
  j["waited_ms"] = r.waited_ms;
}
// As `latch wait`: the exit code says it all.
std::string to_text(const Freed&) { return {}; }

std::string busy_text(const Status& s, const std::function<std::string(std::int64_t)>& since) {
  if (!s.held) return {};
  auto at = [&](const Holder& h) {
    return h.acquired_at >= 0 ? " since " + since(h.acquired_at) : std::string();
  };
  if (s.mode == "shared") {
    std::string out = fmt::format("held by {} reader{}", s.readers, s.readers == 1 ? "" : "s");
    for (const auto& reader : s.reader_list) {
      if (!reader.holder.known()) continue;
      out += fmt::format(", {} {}{}", s.readers == 1 ? "who is" : "among them",
                         describe(reader.holder.who), at(reader.holder));
      break;
    }
    return out;
  }
  std::string who =
      s.holder.known() ? describe(s.holder.who) : "token " + s.token.substr(0, 8) + "…";
  std::string out = "held by " + who + at(s.holder);
  if (s.kept.kept()) {
    out += ", kept after its command ended";
    if (s.kept.exit_code) out += fmt::format(" (exit {})", *s.kept.exit_code);
    return out + ", expires in " + format_elapsed(Millis(s.ttl_ms));
  }
  // A run form records its command's name, and renews until it ends; a `lock acquire` holds
  // it until its TTL unless it is extended.
  if (s.holder.known() && s.holder.who.cmd != "lock acquire") return out + ", renewing";
  return out + ", expires in " + format_elapsed(Millis(s.ttl_ms));
}

}  // namespace rcoord::lock

namespace rcoord::cmd {

std::string local_clock(std::int64_t epoch_ms) {
  auto then = static_cast<std::time_t>(epoch_ms / 1000);
  std::time_t now = std::time(nullptr);
  std::tm t{};
  std::tm today{};
  localtime_r(&then, &t);
  localtime_r(&now, &today);
  bool same_day = t.tm_year == today.tm_year && t.tm_yday == today.tm_yday;
  char text[32];
  std::strftime(text, sizeof text, same_day ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &t);
  return text;
}

namespace {

struct LockArgs {
  std::string name;
  Millis ttl{30'000};
  std::optional<Millis> wait;  // nullopt: try once
  std::string token;
  bool shared = false;
  bool exclusive = false;             // -x: the default, as in flock
  std::optional<std::string> script;  // -c 'CMD': run through the shell, as flock does
  Conflict conflict;
  std::optional<Millis> kill_grace;  // nullopt: the default for the TTL
  std::optional<Millis> max_run;     // nullopt: no limit
  Millis min_hold{0};
  std::optional<Millis> watch;
  std::vector<std::string> command;
};

// The lock API over what the settings name (one server or a Redlock), for leases of `ttl`.
std::unique_ptr<lock::Target> target(Context& ctx, Millis ttl) {
  return lock::open_target(ctx.settings(), ctx.keys(), ttl,
                           [&ctx]() -> Connection& { return ctx.conn(); });
}

// `rcoord: lock 'job' is busy: held by deploy@web-3 (pid 4242, backup.sh) since 02:00:03,
// renewing`. Who holds it costs one more round trip (on a Redlock, to a quorum of the
// masters), taken only when the line is printed.
void note_busy(Context& ctx, lock::Target& t, const std::string& name, std::optional<Millis> wait) {
  if (ctx.out().quiet() || ctx.out().json()) return;
  std::string line = fmt::format("rcoord: lock '{}' is busy", name);
  std::string holder = lock::busy_text(t.status(name), local_clock);
  line += holder.empty() ? " (free again already: try again)" : ": " + holder;
  if (ctx.timeout_after_lock_run && !wait) {
    line += " (--timeout is the I/O timeout; to wait for the lock, give --wait SECS)";
  }
  ctx.out().note(line);
}

void note_not_held(Context& ctx, const std::string& name) {
  ctx.out().note(fmt::format("rcoord: lock '{}' is not held by this token", name));
}

std::string lock_what(const std::string& name) { return fmt::format("lock '{}'", name); }

Holding lock_holding(lock::Target& t, const std::string& name, const std::string& token) {
  return {lock_what(name), [&t, name, token] { t.release(name, token); }};
}

lock::Acquired acquire_or_abort(Context& ctx, lock::Target& t, const std::string& name,
                                const lock::AcquireOptions& opts) {
  return take_or_abort(ctx, lock_holding(t, name, opts.token),
                       [&] { return t.acquire(name, opts); });
}

int run_acquire(Context& ctx, const LockArgs& a) {
  lock::AcquireOptions opts{a.ttl, a.wait, a.token, a.shared, ctx.who()};
  if (opts.token.empty()) opts.token = random_token();
  auto t = target(ctx, a.ttl);
  auto r = acquire_or_abort(ctx, *t, a.name, opts);
  emit_taken(ctx, lock_holding(*t, a.name, opts.token), r, !r.refreshed);
  if (!r.acquired) note_busy(ctx, *t, a.name, a.wait);
  return r.acquired ? kYes : kNo;
}

int run_release(Context& ctx, const LockArgs& a) {
  // A plain release records the holder's own identity, kept by the lock: looking up ours
  // (the user name goes through NSS) would only cost time.
  auto r = target(ctx, a.ttl)->release(a.name, a.token);
  emit_made(ctx, r, r.released ? fmt::format("lock '{}': released", a.name) : "");
  if (!r.released) note_not_held(ctx, a.name);
  return r.released ? kYes : kNo;
}

int run_extend(Context& ctx, const LockArgs& a) {
  auto r = target(ctx, a.ttl)->extend(a.name, a.token, a.ttl);
  emit_made(ctx, r, r.extended ? fmt::format("lock '{}': extended", a.name) : "");
  if (!r.extended) note_not_held(ctx, a.name);
  return r.extended ? kYes : kNo;
}

int run_status(Context& ctx, const LockArgs& a) {
  auto t = target(ctx, a.ttl);
  return run_watched(ctx, a.watch, [&] {
    auto r = t->status(a.name);
    ctx.out().emit(r);
    return r.held ? kYes : kNo;
  });
}

int run_wait(Context& ctx, const LockArgs& a) {
  signals::install();
  auto t = target(ctx, a.ttl);
  auto r = t->wait_free(a.name, a.wait);
  ctx.out().emit(r);
  if (!r.free) note_busy(ctx, *t, a.name, a.wait);
  return r.free ? kYes : kNo;
}

int run_break(Context& ctx, const LockArgs& a) {
  auto r = target(ctx, a.ttl)->break_lock(a.name, ctx.who());
  emit_made(ctx, r, r.broken ? fmt::format("lock '{}': broken", a.name) : "");
  if (!r.broken) ctx.out().note(fmt::format("rcoord: lock '{}' was not held", a.name));
  return r.broken ? kYes : kNo;
}

// The command of `lock run`: the words after --, or -c's line run by $SHELL -c (else
// /bin/sh -c), as flock runs it.
std::vector<std::string> command_of(const LockArgs& a) {
  if (!a.script) return a.command;
  const char* shell = std::getenv("SHELL");
  return {shell != nullptr && *shell != '\0' ? shell : "/bin/sh", "-c", *a.script};
}

int run_run(Context& ctx, const LockArgs& args) {
  LockArgs a = args;
  a.command = command_of(args);
  const Millis ttl = a.ttl;
  // Before the lock is taken: with --min-hold, a typo would keep it for the whole hold.
  check_executable(a.command.front());
  auto t = target(ctx, ttl);
  Millis kill_grace = run_kill_grace(ctx, a.kill_grace, t->lease_length(ttl));
  start_guard_if_waiting(ctx, a.wait, t->lease_length(ttl), kill_grace);
  if (a.wait) {
    notify_waiting([&] {
      std::string holder = lock::busy_text(t->status(a.name), local_clock);
      return holder.empty() ? fmt::format("taking lock '{}'", a.name)
                            : fmt::format("waiting for lock '{}', {}", a.name, holder);
    });
  }
  lock::AcquireOptions opts{ttl, a.wait, a.token, a.shared, ctx.who_runs(a.command)};
  if (opts.token.empty()) opts.token = random_token();
  auto r = acquire_or_abort(ctx, *t, a.name, opts);
  if (!r.acquired) {
    ctx.out().emit(r);  // JSON: the busy object; text: nothing (stdout is the command's)
    if (a.conflict.say()) note_busy(ctx, *t, a.name, a.wait);
    return a.conflict.exit_code;
  }
  if (a.conflict.verbose) {
    ctx.out().note(fmt::format("rcoord: took lock '{}' after {} (fence {}); running {}", a.name,
                               format_elapsed(Millis(r.waited_ms)), r.fence, a.command.front()));
  }
  Lease lease = t->lease(r, ttl);
  HoldingOptions options{{a.command,
                          {{"RCOORD_TOKEN", r.token},
                           {"RCOORD_FENCE", std::to_string(r.fence)},
                           {"RCOORD_LOCK", a.name}},
                          kill_grace}};
  options.supervise.max_run = a.max_run;
  options.min_hold = a.min_hold;
  return run_supervised(ctx, lock_what(a.name), lease, options);
}

CLI::Option* add_name(CLI::App* verb, LockArgs& a) {
  return verb->add_option("name", a.name, "Lock name")->required();
}

}  // namespace

void add_lock(CLI::App& app, Context& ctx) {
  auto* lock = app.add_subcommand("lock", "Mutual exclusion with a TTL and fencing tokens");
  lock->require_subcommand(1);
  // Three or more --url make every lock verb a Redlock (src/lock_target.hpp).
  lock->preparse_callback([&ctx](std::size_t) { ctx.allow_several_urls(); });
  lock->footer("Example: rcoord lock run nightly-backup --ttl 1m -- ./backup.sh");

  auto acq = std::make_shared<LockArgs>();
  auto* a = lock->add_subcommand("acquire", "Take a lock and print its token");
  add_name(a, *acq);
  add_duration(a, "--ttl", acq->ttl, "Lease length (default 30s)", positive("30s"));
  add_wait(a, "-w,--wait", acq->wait,
           "Wait up to DUR (or forever) for the lock; default: try once");
  a->add_flag("--shared", acq->shared,
              "Take it as a reader: many readers at once, never with a writer");
  a->add_option("--token", acq->token,
                "Use this token (re-acquiring with the holder's token "
                "refreshes the TTL)");
  a->footer("Example: TOKEN=$(rcoord lock acquire deploy --ttl 5m) || exit 1");
  on_parse(a, ctx, acq, run_acquire);

  auto rel = std::make_shared<LockArgs>();
  auto* r = lock->add_subcommand("release", "Release a lock held by TOKEN");
  add_name(r, *rel);
  r->add_option("--token", rel->token, "The holder's token (default $RCOORD_TOKEN)")
      ->envname("RCOORD_TOKEN")
      ->required();
  r->footer("Example: rcoord lock release deploy --token \"$TOKEN\"");
  on_parse(r, ctx, rel, run_release);

  auto ext = std::make_shared<LockArgs>();
  auto* e = lock->add_subcommand("extend", "Give a held lock a new TTL");
  add_name(e, *ext);
  e->add_option("--token", ext->token, "The holder's token (default $RCOORD_TOKEN)")
      ->envname("RCOORD_TOKEN")
      ->required();
  add_duration(e, "--ttl", ext->ttl, "New lease length from now (default 30s)", positive("30s"));
  e->footer("Example: rcoord lock extend deploy --token \"$TOKEN\" --ttl 10m");
  on_parse(e, ctx, ext, run_extend);

  auto st = std::make_shared<LockArgs>();
  auto* s = lock->add_subcommand("status", "Show the holder, remaining TTL and fence");
  add_name(s, *st);
  add_watch_option(s, st->watch);
  s->footer("Example: rcoord lock status deploy --json");
  on_parse(s, ctx, st, run_status);

  auto wt = std::make_shared<LockArgs>();
  wt->wait = Millis::max();
  auto* w = lock->add_subcommand("wait", "Wait until a lock is free, without taking it");
  add_name(w, *wt);
  add_wait(w, "-w,--wait", wt->wait,
           "Wait up to DUR (or forever), then exit 1 (default: forever; 0: look once)");
  w->footer(
      "Example: rcoord lock wait deploy --wait 10m && ./smoke-test.sh\n"
      "Free means no writer and no reader holds it. Woken by the release itself; a waiting\n"
      "taker still gets the lock first, so it may be held again when this returns.\n"
      "--timeout after this verb is the I/O timeout, as everywhere but the older verbs\n"
      "signal wait, latch wait, elect observe and history (where it is --wait's old name).");
  on_parse(w, ctx, wt, run_wait);

  auto brk = std::make_shared<LockArgs>();
  auto* b = lock->add_subcommand("break", "Delete a lock whoever holds it (operator override)");
  add_name(b, *brk);
  b->footer("Example: rcoord lock break deploy");
  on_parse(b, ctx, brk, run_break);

  auto run = std::make_shared<LockArgs>();
  auto* x = lock->add_subcommand("run", "Run a command while holding the lock");
  add_name(x, *run);
  add_duration(x, "--ttl", run->ttl, "Lease length, renewed every TTL/3 (default 30s)",
               positive("30s"));
  add_wait(x, "-w,--wait", run->wait,
           "Wait up to DUR (or forever); a bare number is seconds, as flock's -w; default: "
           "try once (flock's -n)");
  x->add_option("--token", run->token, "Use this token instead of a random one");
  x->add_flag("--shared", run->shared,
              "Hold it as a reader: many readers at once, never with a writer");
  x->add_flag("-x,--exclusive", run->exclusive, "Hold it as the only holder (the default)");
  add_conflict_options(x, run->conflict, "the lock is busy or --wait ran out");
  x->add_option("-c,--command", run->script,
                "Run CMD with $SHELL -c (/bin/sh when $SHELL is unset), as flock "
                "-c does, instead of a command after --")
      ->type_name("CMD");
  add_duration(x, "--kill-grace", run->kill_grace,
               "On lock loss, SIGKILL the command this long after SIGTERM (default: 10s or "
               "TTL/3, whichever is shorter)");
  add_max_run_option(x, run->max_run,
                     "Stop the command if it runs longer than DUR (SIGTERM, SIGKILL after "
                     "--kill-grace), release the lock and exit 124");
  add_duration(x, "--min-hold", run->min_hold,
               "Keep the lock until DUR after acquisition even if the command ends sooner");
  x->add_option("command", run->command, "The command and its arguments, after --");
  x->callback([&ctx, run] {
    if (run->command.empty() && !run->script) {
      throw CLI::RequiredError("a command after -- (or -c 'CMD')");
    }
    if (run->shared && run->exclusive) {
      throw Error(kUsage, "--shared and -x (--exclusive) given together",
                  "give one: -x is the default");
    }
    if (!run->command.empty() && run->script) {
      throw Error(kUsage, "a command given both after -- and with -c",
                  "give one: -c 'CMD' runs it through the shell, the words after -- do not");
    }
    ctx.action = [&ctx, run] { return run_run(ctx, *run); };
  });
  x->footer(
      "Example: rcoord lock run nightly-backup --ttl 1m --min-hold 5m -- ./backup.sh\n"
      "         rcoord lock run nightly-backup --max-run 2h -- ./backup.sh   # 124: too long\n"
      "         rcoord lock run nightly-backup -w 10 -E 0 -c 'cd /srv && ./backup.sh'\n"
      "The command gets RCOORD_TOKEN, RCOORD_FENCE and RCOORD_LOCK in its environment.\n"
      "Under systemd ($NOTIFY_SOCKET) it sends STATUS=, READY=1, WATCHDOG=1 and STOPPING=1;\n"
      "a W3C $TRACEPARENT goes into its history events and on to the command.\n"
      "From flock: -w/--wait SECS, -x, -c CMD and -E CODE mean what they mean there, and\n"
      "trying once is the default (flock's -n). -n and -s stay redis-cli's (database and\n"
      "socket) and go before the group; after `lock run` they are refused.");
}

}  // namespace rcoord::cmd
