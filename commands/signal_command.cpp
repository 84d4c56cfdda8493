#include "signal_command.hpp"

#include <fmt/format.h>

#include "deprecated_wait.hpp"
#include "errors.hpp"
#include "signals.hpp"
#include "text.hpp"
#include "watch.hpp"

namespace rcoord::signaling {

void to_json(nlohmann::ordered_json& j, const Sent& r) {
  // channel: the name's old field, kept one release (deprecated)
  j = {{"name", r.channel}, {"channel", r.channel}, {"receivers", r.receivers}};
}
std::string to_text(const Sent& r) { return std::to_string(r.receivers); }

void to_json(nlohmann::ordered_json& j, const Received& r) {
  if (r.received) {
    j = {{"received", true}, {"name", r.channel}, {"channel", r.channel}, {"data", r.data}};
  } else {
    j = {{"received", false}, {"name", r.channel}, {"channel", r.channel}};
  }
}
// One line per message: its data as sent.
std::string to_text(const Received& r) { return r.data + "\n"; }

}  // namespace rcoord::signaling

namespace rcoord::latch {

namespace {
nlohmann::ordered_json count_or_null(bool found, std::int64_t count) {
  return found ? nlohmann::ordered_json(count) : nlohmann::ordered_json(nullptr);
}
}  // namespace

void to_json(nlohmann::ordered_json& j, const Initialized& r) {
  j = {{"created", r.created}, {"name", r.name}, {"count", r.count}};
}
std::string to_text(const Initialized& r) { return r.created ? std::to_string(r.count) : ""; }

void to_json(nlohmann::ordered_json& j, const Counted& r) {
  j = {{"name", r.name}, {"count", count_or_null(r.found, r.count)}};
}
std::string to_text(const Counted& r) { return r.found ? std::to_string(r.count) : ""; }

void to_json(nlohmann::ordered_json& j, const Waited& r) {
  j = {{"open", r.open},
       {"name", r.name},
       {"count", count_or_null(r.count.has_value(), r.count.value_or(0))},
       {"waited_ms", r.waited_ms}};
}
std::string to_text(const Waited&) { return ""; }

void to_json(nlohmann::ordered_json& j, const StatusView& r) { to_json(j, r.status); }
std::string to_text(const StatusView& r) {
  if (!r.status.found) return "";
  return fmt::format("name: {}\ncount: {}\n", escape_text(r.status.name), r.status.count);
}

}  // namespace rcoord::latch

namespace rcoord::cmd {
namespace {

struct SignalArgs {
  std::string channel;                // send
  std::vector<std::string> channels;  // wait
  std::string data;
  bool one = false;
  bool all = false;
  std::optional<Millis> wait;  // nullopt: no limit
};

struct LatchArgs {
  std::string name;
  std::optional<Millis> watch;
  std::int64_t count = -1;
  std::int64_t by = 1;
  std::optional<Millis> ttl;
  std::optional<Millis> wait;
};

// The verb's --wait (how long to wait for the event); `forever` or absent: no limit.
std::optional<Millis> wait_limit(std::optional<Millis> wait) {
  if (wait == Millis::max()) return std::nullopt;
  return wait;
}

std::string for_how_long(std::optional<Millis> wait) {
  return wait ? fmt::format(" within {}", format_wait(*wait)) : std::string();
}

int run_send(Context& ctx, const SignalArgs& a) {
  auto r = signaling::send(ctx.conn(), ctx.keys(), a.channel, a.data, a.one);
  emit_made(ctx, r, r.receivers > 0 ? fmt::format("channel '{}': sent", a.channel) : "");
  if (r.receivers == 0) {
    ctx.out().note(fmt::format("rcoord: nobody waits on channel '{}'", r.channel));
  }
  return r.receivers > 0 ? kYes : kNo;
}

int run_wait(Context& ctx, const SignalArgs& a) {
  signaling::WaitOptions opts{wait_limit(a.wait), a.all};
  signals::install();
  auto r = signaling::wait(ctx.conn(), ctx.keys(), a.channels, opts);
  for (const auto& channel : r.dropped) {
    Printer::warn(fmt::format(
        "rcoord: a --one message on '{}' came after this waiter was done, and nobody else "
        "waited to take it over",
        channel));
  }
  if (!r.complete) {
    if (ctx.out().json()) {
      for (const auto& m : r.messages) ctx.out().emit(m);
    }
    std::vector<std::string> missing;
    for (const auto& m : r.messages) {
      if (!m.received) missing.push_back("'" + m.channel + "'");
    }
    ctx.out().note(
        fmt::format("rcoord: no signal on {}{}", fmt::join(missing, ", "), for_how_long(a.wait)));
    return kNo;
  }
  for (const auto& m : r.messages) ctx.out().emit(m);
  return kYes;
}

int run_init(Context& ctx, const LatchArgs& a) {
  auto r = latch::init(ctx.conn(), ctx.keys(), a.name, a.count, a.ttl);
  emit_made(ctx, r, r.created ? fmt::format("latch '{}': created", a.name) : "");
  if (!r.created) {
    ctx.out().note(fmt::format("rcoord: latch '{}' exists already (count {}); it was left as it is",
                               r.name, r.count));
  }
  return r.created ? kYes : kNo;
}

int run_down(Context& ctx, const LatchArgs& a) {
  auto r = latch::down(ctx.conn(), ctx.keys(), a.name, a.by);
  emit_made(ctx, r, r.found ? fmt::format("latch '{}': counted down", a.name) : "");
  if (!r.found) {
    ctx.out().note(
        fmt::format("rcoord: there is no latch '{}' (create it with latch init)", a.name));
  }
  return r.found ? kYes : kNo;
}

int run_latch_wait(Context& ctx, const LatchArgs& a) {
  signals::install();
  auto r = latch::wait(ctx.conn(), ctx.keys(), a.name, wait_limit(a.wait));
  ctx.out().emit(r);
  if (!r.open) {
    ctx.out().note(r.count
                       ? fmt::format("rcoord: latch '{}' is still at {}{}", a.name, *r.count,
                                     for_how_long(a.wait))
                       : fmt::format("rcoord: there is no latch '{}'{}", a.name,
                                     for_how_long(a.wait).empty()
                                         ? std::string()
                                         : " (it was not created" + for_how_long(a.wait) + ")"));
  }
  return r.open ? kYes : kNo;
}

int run_latch_status(Context& ctx, const LatchArgs& a) {
  return run_watched(ctx, a.watch, [&] {
    auto r = latch::status(ctx.conn(), ctx.keys(), a.name);
    ctx.out().emit(latch::StatusView{r});
    if (!r.found) ctx.out().note(fmt::format("rcoord: there is no latch '{}'", a.name));
    return r.found ? kYes : kNo;
  });
}

// --wait, and --timeout, its deprecated spelling (the verb's own --timeout hid the global
// I/O timeout after these verbs only).
void add_event_wait(CLI::App* verb, std::optional<Millis>& wait, const std::string& what,
                    Context& ctx) {
  auto* option = add_wait(verb, "-w,--wait", wait, what);
  add_deprecated_wait(verb, "--timeout", option, wait, ctx);
}

}  // namespace

void add_signal(CLI::App& app, Context& ctx) {
  auto* signal = app.add_subcommand("signal", "Send and wait for signals on named channels");
  signal->require_subcommand(1);
  signal->footer(
      "Examples:\n"
      "  rcoord signal wait deploys --wait 30s   # on one host\n"
      "  rcoord signal send deploys done        # on another: the waiter prints done");

  auto snd = std::make_shared<SignalArgs>();
  auto* s = signal->add_subcommand("send", "Send DATA to the waiters of CHANNEL; print how many");
  s->add_option("channel", snd->channel, "Channel name")->required();
  s->add_option("data", snd->data, "The message (default: empty)");
  s->add_flag("--one", snd->one, "Deliver to exactly one waiting receiver, chosen at random");
  s->footer("Example: rcoord signal send deploys done --one");
  on_parse(s, ctx, snd, run_send);

  auto wt = std::make_shared<SignalArgs>();
  auto* w = signal->add_subcommand("wait", "Wait for a message on any CHANNEL; print its data");
  w->add_option("channel", wt->channels, "Channel names")->required();
  add_event_wait(w, wt->wait,
                 "Wait up to DUR (or forever) for the message, then exit 1 "
                 "(default: forever)",
                 ctx);
  w->add_flag("--all", wt->all, "Wait for one message on every channel (one line each)");
  w->footer(
      "Example: rcoord signal wait deploys --wait 30s\n"
      "Only messages sent while waiting are received; see latch for a state that persists.");
  on_parse(w, ctx, wt, run_wait);
}

void add_latch(CLI::App& app, Context& ctx) {
  auto* latch = app.add_subcommand("latch", "Count-down latches: wait until N parties are done");
  latch->require_subcommand(1);
  latch->footer(
      "Examples (a CI fan-in: 8 shards count down, one job waits):\n"
      "  rcoord latch init \"tests-$CI_PIPELINE_ID\" --count 8 --ttl 24h\n"
      "  rcoord latch down \"tests-$CI_PIPELINE_ID\"   # in each shard\n"
      "  rcoord latch wait \"tests-$CI_PIPELINE_ID\" --wait 1h && ./publish.sh");

  auto in = std::make_shared<LatchArgs>();
  auto* i = latch->add_subcommand("init", "Create a latch with a count (an existing one is kept)");
  i->add_option("name", in->name, "Latch name")->required();
  i->add_option("--count", in->count, "The count to start from (0 or more)")
      ->required()
      ->type_name("N")
      ->transform(decimal_in(0, kMaxLuaCount));
  add_duration(i, "--ttl", in->ttl, "Delete the latch this long after init (default: never)",
               positive("1h"));
  i->footer("Example: rcoord latch init \"tests-$CI_PIPELINE_ID\" --count 8 --ttl 24h");
  on_parse(i, ctx, in, run_init);

  auto dn = std::make_shared<LatchArgs>();
  auto* d = latch->add_subcommand("down", "Count a latch down; print the count left");
  d->add_option("name", dn->name, "Latch name")->required();
  d->add_option("--by", dn->by, "Count down by K (default 1)")
      ->type_name("K")
      ->transform(decimal_in(1, kMaxLuaCount));
  d->footer("Example: rcoord latch down \"tests-$CI_PIPELINE_ID\"");
  on_parse(d, ctx, dn, run_down);

  auto wt = std::make_shared<LatchArgs>();
  auto* w = latch->add_subcommand("wait", "Wait until the count is 0 (at once if it is)");
  w->add_option("name", wt->name, "Latch name")->required();
  add_event_wait(w, wt->wait, "Wait up to DUR (or forever), then exit 1 (default: forever)", ctx);
  w->footer("Example: rcoord latch wait \"tests-$CI_PIPELINE_ID\" --wait 1h && ./publish.sh");
  on_parse(w, ctx, wt, run_latch_wait);

  auto st = std::make_shared<LatchArgs>();
  auto* s = latch->add_subcommand("status", "Show the count left");
  s->add_option("name", st->name, "Latch name")->required();
  add_watch_option(s, st->watch);
  s->footer("Example: rcoord latch status \"tests-$CI_PIPELINE_ID\" --json");
  on_parse(s, ctx, st, run_latch_status);
}

}  // namespace rcoord::cmd
