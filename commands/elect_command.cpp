#include "elect_command.hpp"

#include <fmt/format.h>

#include "deprecated_wait.hpp"
#include "errors.hpp"
#include "executable.hpp"
#include "hold.hpp"
#include "holder_view.hpp"
#include "holding.hpp"
#include "signals.hpp"
#include "text.hpp"
#include "token.hpp"
#include "watch.hpp"

namespace rcoord::elect {

void to_json(nlohmann::ordered_json& j, const Campaign& r) {
  if (r.leader) {
    j = {{"leader", true}, {"name", r.name},     {"id", r.id},
         {"term", r.term}, {"ttl_ms", r.ttl_ms}, {"waited_ms", r.waited_ms}};
  } else {
    j = {{"leader", false},         {"name", r.name},     {"id", r.id},
         {"term", r.term},          {"ttl_ms", r.ttl_ms}, {"waited_ms", r.waited_ms},
         {"leader_id", r.leader_id}};
  }
}
std::string to_text(const Campaign& r) { return r.leader ? std::to_string(r.term) : ""; }

void to_json(nlohmann::ordered_json& j, const Resigned& r) {
  j = {{"resigned", r.resigned}, {"name", r.name}, {"id", r.id}, {"term", r.term}};
}
std::string to_text(const Resigned& r) { return r.resigned ? "resigned" : ""; }

void to_json(nlohmann::ordered_json& j, const Status& r) {
  j = {
      {"leader", r.leader}, {"name", r.name}, {"id", r.id}, {"term", r.term}, {"ttl_ms", r.ttl_ms}};
  if (r.leader) cmd::add_holder(j, r.holder);
}
std::string to_text(const Status& r) {
  return fmt::format("leader: {}\nname: {}\nid: {}\nterm: {}\nttl_ms: {}\n", r.leader,
                     escape_text(r.name), escape_text(r.id), r.term, r.ttl_ms) +
         (r.leader ? cmd::holder_lines(r.holder) : std::string{});
}

void to_json(nlohmann::ordered_json& j, const Change& r) { to_json(j, r.state); }
// The leader's id (escaped: one line per change), or an empty line when nobody leads.
std::string to_text(const Change& r) { return escape_text(r.state.id) + "\n"; }

}  // namespace rcoord::elect

namespace rcoord::cmd {
namespace {

struct ElectArgs {
  std::string name;
  std::optional<Millis> watch;
  std::string id;
  Millis ttl{10'000};
  std::optional<Millis> wait;     // nullopt: try once
  std::optional<Millis> observe;  // observe --wait: nullopt (or forever) means until interrupted
  Conflict conflict;
  std::optional<Millis> kill_grace;  // nullopt: the default for the TTL
  std::optional<Millis> max_run;     // nullopt: no limit
  std::vector<std::string> command;
};

void note_not_leader(Context& ctx, const elect::Campaign& r) {
  if (r.leader_id == r.id) {
    ctx.out().note(fmt::format(
        "rcoord: '{}' is led by id '{}' (term {}, {} left) in another process: give each "
        "process its own --id",
        r.name, r.leader_id, r.term, format_elapsed(Millis(r.ttl_ms))));
    return;
  }
  ctx.out().note(fmt::format("rcoord: '{}' is led by '{}' (term {}, {} left)", r.name, r.leader_id,
                             r.term, format_elapsed(Millis(r.ttl_ms))));
}

std::string leadership_what(const std::string& name) {
  return fmt::format("leadership of '{}'", name);
}

// Stepping down is exact: the token says which leadership is ours (elect::lease adds the
// term once it is known).
Holding holding(Context& ctx, const std::string& name, const std::string& id,
                const std::string& token) {
  return {leadership_what(name), [&ctx, name, id, token] {
            elect::resign(ctx.conn(), ctx.keys(), name, {id, std::nullopt, token});
          }};
}

elect::Campaign campaign_or_abort(Context& ctx, const std::string& name,
                                  const elect::CampaignOptions& opts) {
  return take_or_abort(ctx, holding(ctx, name, opts.id, opts.token),
                       [&] { return elect::campaign(ctx.conn(), ctx.keys(), name, opts); });
}

int run_campaign(Context& ctx, const ElectArgs& a) {
  elect::CampaignOptions opts{a.id, a.ttl, a.wait, false, random_token(), ctx.who()};
  auto r = campaign_or_abort(ctx, a.name, opts);
  emit_taken(ctx, holding(ctx, a.name, opts.id, opts.token), r);
  if (!r.leader) note_not_leader(ctx, r);
  return r.leader ? kYes : kNo;
}

int run_status(Context& ctx, const ElectArgs& a) {
  return run_watched(ctx, a.watch, [&] {
    auto r = elect::status(ctx.conn(), ctx.keys(), a.name);
    ctx.out().emit(r);
    return r.leader ? kYes : kNo;
  });
}

int run_resign(Context& ctx, const ElectArgs& a) {
  auto r = elect::resign(ctx.conn(), ctx.keys(), a.name, {a.id, std::nullopt, {}});
  emit_made(ctx, r, r.resigned ? fmt::format("election '{}': resigned", a.name) : "");
  if (!r.resigned) ctx.out().note(fmt::format("rcoord: '{}' is not led by '{}'", a.name, a.id));
  return r.resigned ? kYes : kNo;
}

int run_observe(Context& ctx, const ElectArgs& a) {
  std::optional<Millis> duration = a.observe;
  if (duration == Millis::max()) duration.reset();
  signals::install();
  try {
    elect::observe(ctx.conn(), ctx.keys(), a.name, duration,
                   [&](const elect::Status& s) { ctx.out().emit(elect::Change{s}); });
  } catch (const Error& e) {
    // Ctrl-C (or SIGTERM) is how a stream is usually ended: no message for it.
    if (e.code() == kInterrupted && signals::pending() != 0) return 128 + signals::pending();
    throw;
  }
  return kYes;
}

int run_run(Context& ctx, const ElectArgs& a) {
  const Millis ttl = a.ttl;
  Millis kill_grace = run_kill_grace(ctx, a.kill_grace, ttl);
  check_executable(a.command.front());  // before campaigning
  start_guard_if_waiting(ctx, a.wait, ttl, kill_grace);
  if (a.wait) {
    notify_waiting([&] {
      auto s = elect::status(ctx.conn(), ctx.keys(), a.name);
      std::string who = describe(s.holder.who);
      if (!s.leader) return fmt::format("campaigning for leadership of '{}'", a.name);
      return fmt::format("campaigning for leadership of '{}', led by '{}'{} (term {})", a.name,
                         s.id, who.empty() ? "" : ", " + who, s.term);
    });
  }
  elect::CampaignOptions opts{a.id, ttl, a.wait, true, random_token(), ctx.who_runs(a.command)};
  auto r = campaign_or_abort(ctx, a.name, opts);
  if (!r.leader) {
    ctx.out().emit(r);  // JSON: the not-leader object; text: nothing (stdout is the command's)
    if (a.conflict.say()) note_not_leader(ctx, r);
    return a.conflict.exit_code;
  }
  if (a.conflict.verbose) {
    ctx.out().note(fmt::format("rcoord: leading '{}' (term {}) after {}; running {}", a.name,
                               r.term, format_elapsed(Millis(r.waited_ms)), a.command.front()));
  }

  Lease lease = elect::lease(ctx.conn(), ctx.keys(), r, opts.token, ttl);
  HoldingOptions options{
      {a.command,
       {{"RCOORD_TERM", std::to_string(r.term)}, {"RCOORD_ELECTION", a.name}, {"RCOORD_ID", a.id}},
       kill_grace}};
  options.supervise.max_run = a.max_run;
  return run_supervised(ctx, leadership_what(a.name), lease, options);  // then steps down
}

void add_name(CLI::App* verb, ElectArgs& a) {
  verb->add_option("name", a.name, "Election name")->required();
}

void add_id(CLI::App* verb, ElectArgs& a, const std::string& what) {
  verb->add_option("--id", a.id, what)->required()->type_name("ID");
}

void add_ttl(CLI::App* verb, ElectArgs& a, const std::string& what) {
  add_duration(verb, "--ttl", a.ttl, what, positive("10s"));
}

void add_leader_wait(CLI::App* verb, ElectArgs& a) {
  add_wait(verb, "-w,--wait", a.wait,
           "Wait up to DUR (or forever) to become leader; default: try once");
}

}  // namespace

void add_elect(CLI::App& app, Context& ctx) {
  auto* elect = app.add_subcommand("elect", "Leader election with a lease and fencing terms");
  elect->require_subcommand(1);
  elect->footer(
      "Examples:\n"
      "  rcoord elect run scheduler --id \"$(hostname)\" --wait forever -- ./scheduler\n"
      "  rcoord elect status scheduler");

  auto camp = std::make_shared<ElectArgs>();
  auto* c = elect->add_subcommand("campaign", "Become leader (or renew) and print the term");
  add_name(c, *camp);
  add_id(c, *camp, "This candidate's id (unique per process)");
  add_ttl(c, *camp, "Lease length (default 10s); campaign again within it to stay leader");
  add_leader_wait(c, *camp);
  c->footer("Example: TERM=$(rcoord elect campaign scheduler --id \"$(hostname)\" --ttl 30s)");
  on_parse(c, ctx, camp, run_campaign);

  auto st = std::make_shared<ElectArgs>();
  auto* s = elect->add_subcommand("status", "Show the leader, its term and remaining lease");
  add_name(s, *st);
  add_watch_option(s, st->watch);
  s->footer("Example: rcoord elect status scheduler --json");
  on_parse(s, ctx, st, run_status);

  auto res = std::make_shared<ElectArgs>();
  auto* r = elect->add_subcommand("resign", "Step down if ID leads, and wake a candidate");
  add_name(r, *res);
  add_id(r, *res, "The leader's id");
  r->footer("Example: rcoord elect resign scheduler --id \"$(hostname)\"");
  on_parse(r, ctx, res, run_resign);

  auto obs = std::make_shared<ElectArgs>();
  auto* o = elect->add_subcommand("observe", "Print the leader now and on every change");
  add_name(o, *obs);
  auto* observe_for = add_wait(o, "-w,--wait", obs->observe,
                               "Observe for DUR (or forever), then exit 0 (default: forever, "
                               "until interrupted)");
  add_deprecated_wait(o, "--timeout", observe_for, obs->observe, ctx);
  o->footer(
      "Example: rcoord elect observe scheduler | while read -r leader; do ...; done\n"
      "Text: one line per change, the leader's id (an empty line: nobody leads).");
  on_parse(o, ctx, obs, run_observe);

  auto run = std::make_shared<ElectArgs>();
  auto* x = elect->add_subcommand("run", "Run a command while this candidate leads");
  add_name(x, *run);
  add_id(x, *run, "This candidate's id (unique per process)");
  add_ttl(x, *run, "Lease length, renewed every TTL/3 (default 10s)");
  add_leader_wait(x, *run);
  add_conflict_options(x, run->conflict, "another candidate leads");
  add_duration(x, "--kill-grace", run->kill_grace,
               "On loss of leadership, SIGKILL the command this long after SIGTERM (default: "
               "10s or TTL/3, whichever is shorter)");
  add_max_run_option(x, run->max_run,
                     "Stop the command if it runs longer than DUR (SIGTERM, SIGKILL after "
                     "--kill-grace), step down and exit 124");
  x->add_option("command", run->command, "The command and its arguments, after --")->required();
  x->footer(
      "Example: rcoord elect run scheduler --id \"$(hostname)\" --wait forever -- ./scheduler\n"
      "         rcoord elect run compactor --id \"$(hostname)\" --max-run 30m -- ./compact\n"
      "The command gets RCOORD_TERM, RCOORD_ELECTION and RCOORD_ID in its environment.\n"
      "Under systemd ($NOTIFY_SOCKET) it sends STATUS=, READY=1, WATCHDOG=1 and STOPPING=1;\n"
      "a W3C $TRACEPARENT goes into its history events and on to the command.");
  on_parse(x, ctx, run, run_run);
}

}  // namespace rcoord::cmd
