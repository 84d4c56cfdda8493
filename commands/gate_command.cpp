#include "gate_command.hpp"

#include <fmt/format.h>

#include <ctime>

#include "errors.hpp"
#include "executable.hpp"
#include "hold.hpp"
#include "identity.hpp"
#include "lock.hpp"
#include "lock_command.hpp"
#include "semaphore.hpp"
#include "text.hpp"
#include "token.hpp"

namespace rcoord::gate {
namespace {

nlohmann::ordered_json gate_part_json(const Part& p) {
  return {{"type", kind_name(p.kind)}, {"name", p.name}};
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const Taken& r) {
  j = {{"acquired", r.acquired}};
  if (r.acquired) {
    j["token"] = r.token;
    j["ttl_ms"] = r.ttl_ms;
  }
  j["waited_ms"] = r.waited_ms;
  auto parts = nlohmann::ordered_json::array();
  for (const auto& p : r.parts) {
    auto one = gate_part_json(p.part);
    if (!r.acquired) one["acquired"] = p.acquired;
    switch (p.part.kind) {
      case Kind::kLock:
      case Kind::kSharedLock:
        if (p.acquired) {
          one["fence"] = p.fence;
        } else {
          one["ttl_ms"] = p.ttl_ms;
        }
        break;
      case Kind::kSem:
        one["limit"] = p.part.limit;
        one["permits"] = p.part.permits;
        one["holders"] = p.holders;
        one["in_use"] = p.in_use;
        break;
      case Kind::kRate:
        one["remaining"] = p.remaining;
        if (!p.acquired) one["retry_after_ms"] = p.retry_after_ms;
        break;
    }
    parts.push_back(std::move(one));
  }
  if (!r.acquired && !r.parts.empty()) j["refused"] = parts.back();
  j["parts"] = std::move(parts);
}
std::string to_text(const Taken& r) { return r.acquired ? r.token : std::string{}; }

void to_json(nlohmann::ordered_json& j, const Released& r) {
  j = {{"released", r.released}, {"token", r.token}};
  auto parts = nlohmann::ordered_json::array();
  for (const auto& p : r.parts) {
    auto one = gate_part_json(p.part);
    one["released"] = p.held;
    parts.push_back(std::move(one));
  }
  j["parts"] = std::move(parts);
}
std::string to_text(const Released& r) { return r.released ? "released" : std::string{}; }

void to_json(nlohmann::ordered_json& j, const Extended& r) {
  j = {{"extended", r.extended}, {"token", r.token}, {"ttl_ms", r.ttl_ms}};
  auto parts = nlohmann::ordered_json::array();
  for (const auto& p : r.parts) {
    auto one = gate_part_json(p.part);
    one["extended"] = p.held;
    if (p.part.kind == Kind::kLock || p.part.kind == Kind::kSharedLock) one["fence"] = p.fence;
    parts.push_back(std::move(one));
  }
  j["parts"] = std::move(parts);
}
std::string to_text(const Extended& r) {
  return r.extended ? fmt::format("ttl_ms: {}", r.ttl_ms) : std::string{};
}

void to_json(nlohmann::ordered_json& j, const Status& r) {
  j = {{"held", r.held}, {"token", r.token}, {"ttl_ms", r.ttl_ms}};
  auto parts = nlohmann::ordered_json::array();
  for (const auto& p : r.parts) {
    auto one = gate_part_json(p.part);
    one["held"] = p.held;
    if (p.part.kind == Kind::kLock || p.part.kind == Kind::kSharedLock) one["fence"] = p.fence;
    if (p.part.kind == Kind::kSem) {
      one["limit"] = p.part.limit;
      one["permits"] = p.part.permits;
    }
    if (p.part.kind == Kind::kRate) one["rate"] = p.part.rate_text;
    parts.push_back(std::move(one));
  }
  j["parts"] = std::move(parts);
}
std::string to_text(const Status& r) {
  // field: value lines with the JSON names; one `parts:` line per part.
  std::string out = fmt::format("held: {}\ntoken: {}\nttl_ms: {}\n", r.held ? "true" : "false",
                                escape_text(r.token), r.ttl_ms);
  for (const auto& p : r.parts) {
    out += fmt::format("parts: {} {} held={}", kind_name(p.part.kind), escape_text(p.part.name),
                       p.held ? "true" : "false");
    if (p.part.kind == Kind::kLock || p.part.kind == Kind::kSharedLock) {
      out += fmt::format(" fence={}", p.fence);
    }
    out += '\n';
  }
  return out;
}

}  // namespace rcoord::gate

namespace rcoord::cmd {
namespace {

struct GateArgs {
  std::vector<std::string> locks;
  std::vector<std::string> shared_locks;
  std::vector<std::string> sems;
  std::vector<std::string> rates;
  Millis ttl{30'000};
  std::optional<Millis> wait;  // nullopt: try once
  std::string token;
  Conflict conflict;
  std::optional<Millis> kill_grace;  // nullopt: the default for the TTL
  std::optional<Millis> max_run;     // nullopt: no limit
  std::vector<std::string> command;
};

// The parts the options name, in the global order. Throws Error(kUsage): no network yet.
std::vector<gate::Part> gate_parts(const GateArgs& a) {
  std::vector<gate::Part> parts;
  for (const auto& n : a.locks) parts.push_back({gate::Kind::kLock, n});
  for (const auto& n : a.shared_locks) parts.push_back({gate::Kind::kSharedLock, n});
  for (const auto& s : a.sems) parts.push_back(gate::parse_sem(s));
  for (const auto& r : a.rates) parts.push_back(gate::parse_rate(r));
  gate::order(parts);
  return parts;
}

// Who takes the parts: as any take, with a note naming the gate when the user gave none, so
// that each part's holder and history say which gate holds it.
std::string gate_who(const Context& ctx, const std::string& token,
                     const std::vector<std::string>& command) {
  Identity id = ctx.identity(command.empty() ? std::string{} : command_basename(command.front()));
  if (id.note.empty()) id.note = "gate " + token.substr(0, 8);
  return pack(id);
}

std::string gate_local_clock(std::int64_t epoch_ms) {
  auto then = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm t{};
  localtime_r(&then, &t);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &t);
  return text;
}

// Says on stderr which part refused the gate, and its holder where known.
void note_refused(Context& ctx, const gate::Taken& r) {
  if (ctx.out().quiet() || ctx.out().json() || r.parts.empty()) return;
  const gate::PartTaken& no = r.parts.back();
  std::string line;
  switch (no.part.kind) {
    case gate::Kind::kLock:
    case gate::Kind::kSharedLock: {
      line = fmt::format("rcoord: gate not taken: lock '{}' is busy", no.part.name);
      std::string holder =
          lock::busy_text(lock::status(ctx.conn(), ctx.keys(), no.part.name), gate_local_clock);
      if (!holder.empty()) line += ": " + holder;
      break;
    }
    case gate::Kind::kSem:
      line = fmt::format("rcoord: gate not taken: semaphore '{}' is full ({} of {} permits in use)",
                         no.part.name, no.in_use, no.part.limit);
      break;
    case gate::Kind::kRate:
      line = no.retry_after_ms < 0
                 ? fmt::format("rcoord: gate not taken: rate '{}' never allows it", no.part.name)
                 : fmt::format("rcoord: gate not taken: rate '{}' denies it (retry after {} ms)",
                               no.part.name, no.retry_after_ms);
      break;
  }
  ctx.out().note(line + "; nothing is held");
}

Holding gate_holding(Context& ctx, const std::vector<gate::Part>& parts, const std::string& token) {
  return {"a gate",
          [&ctx, parts, token] { gate::give_back_all(ctx.conn(), ctx.keys(), parts, token); }};
}

gate::Taken take_gate(Context& ctx, const GateArgs& a, const std::vector<gate::Part>& parts,
                      gate::TakeOptions& opts) {
  opts.ttl = a.ttl;
  opts.wait = a.wait;
  opts.token = a.token.empty() ? random_token() : a.token;
  opts.who = gate_who(ctx, opts.token, a.command);
  return cmd::take_or_abort(ctx, gate_holding(ctx, parts, opts.token),
                            [&] { return gate::take(ctx.conn(), ctx.keys(), parts, opts); });
}

int run_gate_acquire(Context& ctx, const GateArgs& a) {
  auto parts = gate_parts(a);
  gate::TakeOptions opts;
  auto r = take_gate(ctx, a, parts, opts);
  emit_taken(ctx, gate_holding(ctx, parts, opts.token), r);
  if (!r.acquired) note_refused(ctx, r);
  return r.acquired ? kYes : kNo;
}

void note_gate_not_held(Context& ctx, const std::string& token) {
  ctx.out().note(fmt::format("rcoord: gate {}: this token holds no gate, or not every part of it",
                             token.substr(0, 8)));
}

int run_gate_release(Context& ctx, const GateArgs& a) {
  auto r = gate::release(ctx.conn(), ctx.keys(), a.token);
  emit_made(ctx, r, r.parts.empty() ? "" : "gate: released");
  if (!r.released) note_gate_not_held(ctx, a.token);
  return r.released ? kYes : kNo;
}

int run_gate_extend(Context& ctx, const GateArgs& a) {
  auto r = gate::extend(ctx.conn(), ctx.keys(), a.token, a.ttl);
  emit_made(ctx, r, r.extended ? "gate: extended" : "");
  if (!r.extended) note_gate_not_held(ctx, a.token);
  return r.extended ? kYes : kNo;
}

int run_gate_status(Context& ctx, const GateArgs& a) {
  auto r = gate::status(ctx.conn(), ctx.keys(), a.token);
  ctx.out().emit(r);
  return r.held ? kYes : kNo;
}

int run_gate_run(Context& ctx, const GateArgs& a) {
  auto parts = gate_parts(a);
  check_executable(a.command.front());  // before anything is taken
  Millis kill_grace = run_kill_grace(ctx, a.kill_grace, a.ttl);
  start_guard_if_waiting(ctx, a.wait, a.ttl, kill_grace);
  gate::TakeOptions opts;
  auto r = take_gate(ctx, a, parts, opts);
  if (!r.acquired) {
    ctx.out().emit(r);  // JSON: the refusal; text: nothing (stdout is the command's)
    if (a.conflict.say()) note_refused(ctx, r);
    return a.conflict.exit_code;
  }
  if (a.conflict.verbose) {
    ctx.out().note(fmt::format("rcoord: took a gate of {} parts after {}; running {}",
                               r.parts.size(), format_elapsed(Millis(r.waited_ms)),
                               a.command.front()));
  }
  Lease lease = gate::lease(ctx.conn(), ctx.keys(), r, a.ttl);
  HoldingOptions options{{a.command, {{"RCOORD_TOKEN", r.token}}, kill_grace}};
  options.supervise.max_run = a.max_run;
  return run_supervised(ctx, fmt::format("gate {}", r.token.substr(0, 8)), lease, options);
}

void add_gate_part_options(CLI::App* verb, GateArgs& a) {
  verb->add_option("--lock", a.locks, "Take exclusive lock NAME (repeatable)")
      ->type_name("NAME")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  verb->add_option("--shared-lock", a.shared_locks, "Take lock NAME as a reader (repeatable)")
      ->type_name("NAME")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  verb->add_option("--sem", a.sems,
                   "Take PERMITS (default 1) of LIMIT permits of semaphore NAME (repeatable)")
      ->type_name("NAME:LIMIT[:PERMITS]")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  verb->add_option("--rate", a.rates,
                   "Consume one slot of rate limit NAME at RATE, e.g. api:10/s (repeatable)")
      ->type_name("NAME:RATE")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_duration(verb, "--ttl", a.ttl, "Lease of every part (default 30s)", positive("30s"));
  add_wait(verb, "-w,--wait", a.wait,
           "Wait up to DUR (or forever) for every part at once; default: try once");
  verb->add_option("--token", a.token, "Use this token instead of a random one");
}

void add_gate_token_option(CLI::App* verb, GateArgs& a) {
  verb->add_option("--token", a.token, "The gate's token (default $RCOORD_TOKEN)")
      ->envname("RCOORD_TOKEN")
      ->required();
}

}  // namespace

void add_gate(CLI::App& app, Context& ctx) {
  auto* gate = app.add_subcommand("gate", "Several locks, permits and rate slots, all or nothing");
  gate->require_subcommand(1);
  gate->footer(
      "Example: rcoord gate run --lock db --sem gpu:4 --rate api:10/s --wait 5m -- ./job.sh");

  auto acq = std::make_shared<GateArgs>();
  auto* a = gate->add_subcommand("acquire", "Take every part, or none, and print the token");
  add_gate_part_options(a, *acq);
  a->footer("Example: TOKEN=$(rcoord gate acquire --lock a --lock b --sem pool:3) || exit 1");
  on_parse(a, ctx, acq, run_gate_acquire);

  auto rel = std::make_shared<GateArgs>();
  auto* r = gate->add_subcommand("release", "Give back every part held by TOKEN");
  add_gate_token_option(r, *rel);
  r->footer("Example: rcoord gate release --token \"$TOKEN\"");
  on_parse(r, ctx, rel, run_gate_release);

  auto ext = std::make_shared<GateArgs>();
  auto* e = gate->add_subcommand("extend", "Extend the lease of every part held by TOKEN");
  add_gate_token_option(e, *ext);
  add_duration(e, "--ttl", ext->ttl, "New lease from now (default 30s)", positive("30s"));
  e->footer("Example: rcoord gate extend --token \"$TOKEN\" --ttl 1m");
  on_parse(e, ctx, ext, run_gate_extend);

  auto st = std::make_shared<GateArgs>();
  auto* s =
      gate->add_subcommand("status", "Show the parts of TOKEN's gate and whether it holds them");
  add_gate_token_option(s, *st);
  s->footer("Example: rcoord gate status --token \"$TOKEN\" --json");
  on_parse(s, ctx, st, run_gate_status);

  auto run = std::make_shared<GateArgs>();
  auto* x = gate->add_subcommand("run", "Run a command while holding every part");
  add_gate_part_options(x, *run);
  add_conflict_options(x, run->conflict, "some part is taken");
  add_duration(x, "--kill-grace", run->kill_grace,
               "On the loss of a part, SIGKILL the command this long after SIGTERM (default: 10s "
               "or TTL/3, whichever is shorter)");
  add_max_run_option(x, run->max_run,
                     "Stop the command if it runs longer than DUR (SIGTERM, SIGKILL after "
                     "--kill-grace), give every part back and exit 124");
  x->add_option("command", run->command, "The command and its arguments, after --")->required();
  x->footer(
      "Example: rcoord gate run --lock a --lock b --sem pool:2 --wait forever -- ./job.sh\n"
      "The command gets RCOORD_TOKEN in its environment; the loss of any part stops it (exit 5).");
  on_parse(x, ctx, run, run_gate_run);
}

}  // namespace rcoord::cmd
