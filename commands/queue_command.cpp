#include "queue_command.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "config.hpp"
#include "consume.hpp"
#include "errors.hpp"
#include "executable.hpp"
#include "hold.hpp"
#include "holder_view.hpp"
#include "items.hpp"
#include "notify.hpp"
#include "signals.hpp"
#include "text.hpp"
#include "watch.hpp"

namespace rcoord::cmd {
namespace {

// The lease a plain pop takes its messages under until they are written out and
// acknowledged: what it took comes back after this long if rcoord cannot tell the server.
constexpr Millis kPlainPopLease{30'000};

struct QueueArgs {
  std::string name;
  std::optional<Millis> watch;
  std::vector<std::string> items;  // messages (push) or ids (replay)
  std::vector<std::string> files;
  bool nul = false;
  Millis delay{0};
  std::optional<Millis> wait;  // nullopt: try once
  std::int64_t count = 1;
  bool count_given = false;
  bool lifo = false;
  std::optional<Millis> ack_timeout;  // pop: nullopt for a plain pop
  std::int64_t max_attempts = 5;
  std::string id;
  std::int64_t attempt = 0;
  bool dead = false;
  bool in_flight = false;  // peek: the messages in flight
  std::int64_t max_messages = 0;
  Millis idle_exit = Millis::max();  // consume: forever
  Millis retry_delay{0};
  std::optional<Millis> kill_grace;  // nullopt: the default for the lease
  std::optional<Millis> max_run;     // nullopt: no limit
  std::vector<std::string> command;
};

// Messages to stdout: JSON Lines, or byte-exact text records.
void print_messages(Context& ctx, const std::string& name,
                    const std::vector<queue::Message>& messages, queue::RecordStyle style) {
  if (ctx.out().json()) {
    if (ctx.out().quiet()) return;
    for (const auto& m : messages) {
      nlohmann::ordered_json j;
      queue::to_json(j, m);
      name_first(j, name);
      ctx.out().write_json(j);
    }
    return;
  }
  ctx.out().write_raw(queue::to_records(messages, style));
}

// One message from a file, or from stdin for "-": at most what one stdin item may hold.
std::string read_file(const std::string& path) {
  return read_small_file(path, "--file", ItemReader::kMaxItemBytes,
                         fmt::format("a message holds at most {}; split it into several",
                                     format_size(ItemReader::kMaxItemBytes)),
                         /*stdin_dash=*/true);
}

int run_push(Context& ctx, const QueueArgs& a) {
  queue::Pushed r{a.name, 0, -1};
  auto push = [&](const std::vector<std::string>& batch) {
    r.length = queue::push(ctx.conn(), ctx.keys(), a.name, batch, a.delay);
    r.pushed += static_cast<std::int64_t>(batch.size());
  };
  if (!a.files.empty()) {
    if (!a.items.empty()) {
      throw Error(kUsage, "give messages as arguments or with --file, not both",
                  "use one --file per message");
    }
    for (const auto& f : a.files) push({read_file(f)});
  } else {
    for_each_batch(ItemSource{a.items, a.nul}, 256, push);
  }
  if (r.length < 0) push({});  // empty input: report the length anyway
  emit_made(ctx, r, r.pushed > 0 ? fmt::format("queue '{}': pushed", a.name) : "");
  return kYes;
}

// Messages that could not be written out go back to the head of the queue, as if this
// delivery never happened. If that fails too, their lease brings them back.
void give_back_messages(Context& ctx, const std::string& name,
                        const std::vector<queue::Message>& messages, Millis lease) {
  signals::Uninterruptible quiet;
  DeadlineCap bounded(ctx.conn(), std::chrono::steady_clock::now() + ctx.settings().timeout);
  try {
    // Each goes back to the head: the last first, so that they stand in their old order.
    for (std::size_t i = messages.size(); i-- > 0;) {
      const queue::Message& m = messages[i];
      queue::nack(ctx.conn(), ctx.keys(), name, m.id, {Millis(0), m.attempt, true});
    }
  } catch (const Error& e) {
    Printer::warn(fmt::format(
        "rcoord: could not put the messages back in queue '{}': {} (they are delivered again "
        "when their lease ends, within {})",
        name, e.what(), format_duration(lease)));
  }
}

// A plain pop acknowledges what it took only once it is written out. An acknowledgement that
// cannot be made means the messages will be delivered again: exit 3 says so.
void acknowledge(Context& ctx, const std::string& name,
                 const std::vector<queue::Message>& messages) {
  signals::Uninterruptible quiet;
  std::vector<std::string> unacked;
  std::string why;
  for (const auto& m : messages) {
    bool acked = false;
    // A connection that failed is replaced by a fresh one for a second try.
    for (int attempt = 0; attempt < 2 && !acked; ++attempt) {
      try {
        acked = queue::ack(ctx.conn(), ctx.keys(), name, m.id, m.attempt);
        if (!acked) {
          why = "its lease ended before the output was taken";
          break;
        }
      } catch (const Error& e) {
        why = e.what();
      }
    }
    if (!acked) unacked.push_back(m.id);
  }
  if (unacked.empty()) return;
  throw Error(kConnection,
              fmt::format("message(s) {} of queue '{}' were written but not acknowledged: {}",
                          fmt::join(unacked, ", "), name, why),
              "they will be delivered again");
}

int run_pop(Context& ctx, const QueueArgs& a) {
  queue::PopOptions o;
  o.count = a.count;
  o.lifo = a.lifo;
  o.wait = a.wait;
  o.ack_timeout = a.ack_timeout;
  o.max_attempts = a.max_attempts;
  o.who = ctx.who();
  // A plain pop leases what it takes too, and acknowledges it once written: a message whose
  // reply is lost, or that stdout cannot take, goes back to the queue instead of vanishing.
  const bool plain = !o.ack_timeout;
  if (plain) o.ack_timeout = kPlainPopLease;
  if (o.wait) signals::install();  // Ctrl-C ends the wait; nothing is taken then
  auto r = queue::pop(ctx.conn(), ctx.keys(), a.name, o);
  if (r.messages.empty()) {
    ctx.out().note(o.wait ? fmt::format("rcoord: no message arrived in queue '{}'", a.name)
                          : fmt::format("rcoord: queue '{}' is empty", a.name));
    return kNo;
  }
  try {
    print_messages(ctx, a.name, r.messages, {!plain, a.nul ? '\0' : '\n'});
  } catch (const OutputError&) {
    give_back_messages(ctx, a.name, r.messages, *o.ack_timeout);
    throw;
  }
  if (plain) acknowledge(ctx, a.name, r.messages);
  return kYes;
}

int run_ack(Context& ctx, const QueueArgs& a) {
  queue::Acked r{queue::ack(ctx.conn(), ctx.keys(), a.name, a.id, a.attempt), a.name, a.id};
  emit_made(ctx, r, r.acked ? fmt::format("queue '{}': message {} acked", a.name, a.id) : "");
  if (!r.acked) {
    ctx.out().note(fmt::format(
        "rcoord: message {} is not in flight in queue '{}' (acked already, or its lease ran out)",
        a.id, a.name));
  }
  return r.acked ? kYes : kNo;
}

int run_nack(Context& ctx, const QueueArgs& a) {
  queue::NackOptions o{a.delay, a.attempt, false};
  queue::Nacked r{a.name, a.id, queue::nack(ctx.conn(), ctx.keys(), a.name, a.id, o)};
  emit_made(ctx, r,
            r.state != queue::NackState::kNotInFlight
                ? fmt::format("queue '{}': message {} nacked", a.name, a.id)
                : "");
  if (r.state == queue::NackState::kNotInFlight) {
    ctx.out().note(fmt::format(
        "rcoord: message {} is not in flight in queue '{}' (acked already, or its lease ran out)",
        a.id, a.name));
    return kNo;
  }
  return kYes;
}

int run_len(Context& ctx, const QueueArgs& a) {
  auto s = queue::stats(ctx.conn(), ctx.keys(), a.name);
  ctx.out().emit(queue::Length{a.name, s.ready + s.delayed});
  return kYes;
}

// One line per message in flight: who leased it, for how long, and the message (escaped).
std::string in_flight_lines(const std::vector<queue::Message>& messages) {
  std::string out;
  for (const auto& m : messages) {
    out += fmt::format("{} attempt={} lease_ms={}", m.id, m.attempt, m.lease_ms);
    out += holder_suffix(m.consumer) + ": " + escape_text(m.message) + "\n";
  }
  return out;
}

int run_peek_in_flight(Context& ctx, const QueueArgs& a) {
  auto messages = queue::in_flight(ctx.conn(), ctx.keys(), a.name, a.count);
  if (messages.empty()) {
    ctx.out().note(fmt::format("rcoord: queue '{}' has no message in flight", a.name));
    return kNo;
  }
  if (!ctx.out().json()) {
    ctx.out().write_text(in_flight_lines(messages));
    return kYes;
  }
  if (ctx.out().quiet()) return kYes;
  for (const auto& m : messages) {
    nlohmann::ordered_json j;
    queue::to_json(j, m);
    j["lease_ms"] = m.lease_ms;
    nlohmann::ordered_json who;
    add_holder(who, m.consumer);
    // The consumer's take is a lease: its time is `leased_at`.
    if (who.contains("acquired_at")) {
      j["leased_at"] = who["acquired_at"];
      who.erase("acquired_at");
    }
    j.update(who);
    name_first(j, a.name);
    ctx.out().write_json(j);
  }
  return kYes;
}

int run_peek(Context& ctx, const QueueArgs& a) {
  if (a.in_flight) return run_peek_in_flight(ctx, a);
  auto messages = queue::peek(ctx.conn(), ctx.keys(), a.name, a.count);
  if (messages.empty()) {
    ctx.out().note(fmt::format("rcoord: queue '{}' has no ready message", a.name));
    return kNo;
  }
  print_messages(ctx, a.name, messages, {false, a.nul ? '\0' : '\n'});
  return kYes;
}

int run_stats(Context& ctx, const QueueArgs& a) {
  return run_watched(ctx, a.watch, [&] {
    ctx.out().emit(named(a.name, queue::stats(ctx.conn(), ctx.keys(), a.name)));
    return kYes;
  });
}

int run_dead(Context& ctx, const QueueArgs& a) {
  // Page through the set, so a long one never sits in memory (or in one script) at once.
  constexpr std::int64_t kPage = 100;
  std::int64_t listed = 0;
  for (;;) {
    std::int64_t want = a.count_given ? std::min(kPage, a.count - listed) : kPage;
    if (want <= 0) break;
    auto page = queue::dead(ctx.conn(), ctx.keys(), a.name, listed, want);
    print_messages(ctx, a.name, page, {true, a.nul ? '\0' : '\n'});
    listed += static_cast<std::int64_t>(page.size());
    if (static_cast<std::int64_t>(page.size()) < want) break;
  }
  if (listed == 0) {
    ctx.out().note(fmt::format("rcoord: queue '{}' has no dead message", a.name));
    return kNo;
  }
  return kYes;
}

int run_replay(Context& ctx, const QueueArgs& a) {
  queue::Counted r{"replayed", a.name,
                   queue::replay(ctx.conn(), ctx.keys(), a.name, a.items, ctx.who())};
  emit_made(ctx, r, r.count > 0 ? fmt::format("queue '{}': replayed", a.name) : "");
  if (r.count == 0) {
    ctx.out().note(fmt::format("rcoord: no dead message to replay in queue '{}'", a.name));
    return kNo;
  }
  return kYes;
}

int run_purge(Context& ctx, const QueueArgs& a) {
  queue::Counted r{"purged", a.name,
                   queue::purge(ctx.conn(), ctx.keys(), a.name, a.dead, ctx.who())};
  emit_made(ctx, r, r.count > 0 ? fmt::format("queue '{}': purged", a.name) : "");
  return kYes;
}

// --- consume ---------------------------------------------------------------------------------

using queue::ConsumeOptions;

// A command that cannot be run would fail every message until all of them are dead: check it
// the way execvp will look for it, before taking any.
void check_runnable(const std::string& command) {
  int e = executable_errno(command);
  if (e == 0) return;
  throw Error(kUsage,
              fmt::format("cannot run '{}': {}", command,
                          e == ENOENT ? std::string("no such executable") : std::strerror(e)),
              "check the command and PATH; no message was taken");
}

// What becomes of a message whose lease was lost, as the server says after the loss.
std::string_view fate_text(queue::Fate fate) {
  switch (fate) {
    case queue::Fate::kPending:
      return "the message will be delivered again";
    case queue::Fate::kDead:
      return "the message is dead now (see 'queue dead')";
    case queue::Fate::kGone:
      return "the message is no longer in the queue (acked elsewhere, purged, removed or "
             "flushed): it will not be delivered again";
    case queue::Fate::kUnknown:
      break;
  }
  return "the message is delivered again if it is still in the queue";
}

// What becomes of each message, on stderr (a failure is a note: -q silences it).
void report(Context& ctx, const std::string& name, const ConsumeOptions& opts,
            const queue::ConsumeEvent& e) {
  const queue::Message& m = e.message;
  switch (e.kind) {
    case queue::ConsumeEvent::Kind::kLost:
      Printer::warn(fmt::format(
          "rcoord: the lease on message {} of queue '{}' was lost while the command ran: {} "
          "(the command was terminated; {})",
          m.id, name, e.lost_reason, fate_text(e.fate)));
      return;
    case queue::ConsumeEvent::Kind::kLostUnstarted:
      Printer::warn(fmt::format(
          "rcoord: the lease on message {} of queue '{}' was lost before the command could "
          "start: {} (the command was not started; the message is given back, this delivery "
          "not counted)",
          m.id, name, e.lost_reason));
      return;
    case queue::ConsumeEvent::Kind::kTimedOut:
      warn_timed_out(opts.supervise.max_run.value_or(Millis(0)), opts.supervise.kill_grace,
                     fmt::format("message {} is given back", m.id));
      return;
    case queue::ConsumeEvent::Kind::kAckLate:
      Printer::warn(
          fmt::format("rcoord: message {} of queue '{}' was handled, but its lease was gone "
                      "before the ack ({})",
                      m.id, name, fate_text(e.fate)));
      return;
    case queue::ConsumeEvent::Kind::kFailed: {
      std::string outcome = e.state == queue::NackState::kDead ? "dead now (see 'queue dead')"
                            : e.state == queue::NackState::kNotInFlight
                                ? "its lease was gone already"
                                : queue::state_name(e.state) + " again";
      ctx.out().note(
          fmt::format("rcoord: message {} of queue '{}' (attempt {}) failed with exit {}: {}", m.id,
                      name, m.attempt, e.exit_code, outcome));
      return;
    }
  }
}

int run_consume(Context& ctx, const QueueArgs& a) {
  ConsumeOptions o;
  const Millis ack_timeout = *a.ack_timeout;  // consume's has a default
  o.supervise.command = a.command;
  o.supervise.kill_grace = run_kill_grace(ctx, a.kill_grace, ack_timeout, "--ack-timeout");
  o.supervise.margin = run_margin(ctx, ack_timeout);
  o.retry_delay = a.retry_delay;
  o.supervise.max_run = a.max_run;
  if (a.max_messages < 0) throw Error(kUsage, "--max-messages must be positive", "use e.g. 100");
  o.max_messages = a.max_messages;
  check_runnable(a.command.front());
  o.pop.ack_timeout = ack_timeout;
  o.pop.max_attempts = a.max_attempts;
  o.pop.wait = a.idle_exit;
  o.pop.who = ctx.who_runs(a.command);
  // Under systemd (notify.hpp): ready once the first look at the queue was answered, alive
  // at each look and renewal after it, stopping when consume ends.
  bool ready = false;
  if (notify::active()) {
    o.pop.on_alive = [&ready, &a, watchdog = notify::watchdog_wanted()] {
      if (!ready) {
        ready = true;
        notify::send("READY=1\n" + notify::status(fmt::format("consuming queue '{}'", a.name)));
      } else if (watchdog) {
        notify::send("WATCHDOG=1");
      }
    };
  }
  int code = queue::consume(ctx.conn(), ctx.keys(), a.name, o, [&](const queue::ConsumeEvent& e) {
               report(ctx, a.name, o, e);
             }).exit_code;
  if (ready) notify::send("STOPPING=1");
  return code;
}

void add_name(CLI::App* verb, QueueArgs& a) {
  verb->add_option("queue", a.name, "Queue name")->required();
}

CLI::Option* add_count(CLI::App* verb, QueueArgs& a, const std::string& help) {
  return verb->add_option("--count", a.count, help)
      ->type_name("N")
      ->transform(decimal_in(1, kMaxLuaCount));
}

void add_max_attempts(CLI::App* verb, QueueArgs& a) {
  verb->add_option("--max-attempts", a.max_attempts,
                   "Deliver a message at most N times, then it is dead (default 5)")
      ->type_name("N")
      ->transform(decimal_in(1, kMaxLuaCount));
}

void add_nul(CLI::App* verb, QueueArgs& a, const std::string& help) {
  verb->add_flag("-0,--null", a.nul, help);
}

}  // namespace

void add_queue(CLI::App& app, Context& ctx) {
  auto* queue = app.add_subcommand("queue", "Reliable queues: push, pop, ack, dead letters");
  queue->require_subcommand(1);
  queue->footer(
      "Examples:\n"
      "  rcoord queue push jobs 'resize 1.jpg' 'resize 2.jpg'\n"
      "  rcoord queue consume jobs --ack-timeout 5m -- ./handle.sh");

  auto push = std::make_shared<QueueArgs>();
  auto* p = queue->add_subcommand("push", "Push messages (arguments, or stdin one per line)");
  add_name(p, *push);
  p->add_option("messages", push->items, "Messages; none or '-': one per line of stdin");
  add_nul(p, *push, "Stdin messages end with NUL instead of newline");
  p->add_option("--file", push->files,
                "Push the whole of FILE as one message ('-': stdin), byte for byte; repeatable")
      ->type_name("FILE");
  add_duration(p, "--delay", push->delay, "Make the messages ready only after DUR");
  p->footer(
      "Example: rcoord queue push jobs 'resize 1.jpg' 'resize 2.jpg'\n"
      "         find . -name '*.jpg' -print0 | rcoord queue push jobs -0\n"
      "Prints the number of messages waiting afterwards (ready + delayed).");
  on_parse(p, ctx, push, run_push);

  auto pop = std::make_shared<QueueArgs>();
  auto* o =
      queue->add_subcommand("pop", "Take messages (plain: at most once; --ack-timeout: leased)");
  add_name(o, *pop);
  add_wait(o, "-w,--wait", pop->wait,
           "Wait up to DUR (or forever) for a message; default: try once");
  add_count(o, *pop, "Take up to N messages (default 1)");
  o->add_flag("--lifo", pop->lifo, "Newest first");
  add_duration(o, "--ack-timeout", pop->ack_timeout,
               "Lease the messages for DUR: ack them in time, or they are delivered again",
               positive("30s"));
  add_max_attempts(o, *pop);
  add_nul(o, *pop, "End each message with NUL instead of newline");
  o->footer(
      "Example: rcoord queue pop jobs --wait 30s\n"
      "         rcoord --json queue pop jobs --ack-timeout 5m   # then: rcoord queue ack jobs ID");
  on_parse(o, ctx, pop, run_pop);

  auto ack = std::make_shared<QueueArgs>();
  auto* k = queue->add_subcommand("ack", "Confirm a leased message: it is deleted");
  add_name(k, *ack);
  k->add_option("id", ack->id, "Message id, as pop printed it")->required();
  k->add_option("--attempt", ack->attempt, "Only if the lease is still that delivery's")
      ->type_name("N")
      ->transform(decimal_in(1, kMaxLuaCount));
  k->footer("Example: rcoord queue ack jobs 17");
  on_parse(k, ctx, ack, run_ack);

  auto nack = std::make_shared<QueueArgs>();
  auto* n = queue->add_subcommand("nack", "Give a leased message back: ready again, or dead");
  add_name(n, *nack);
  n->add_option("id", nack->id, "Message id, as pop printed it")->required();
  add_duration(n, "--delay", nack->delay, "Ready again only after DUR");
  n->add_option("--attempt", nack->attempt, "Only if the lease is still that delivery's")
      ->type_name("N")
      ->transform(decimal_in(1, kMaxLuaCount));
  n->footer("Example: rcoord queue nack jobs 17 --delay 1m");
  on_parse(n, ctx, nack, run_nack);

  auto consume = std::make_shared<QueueArgs>();
  consume->ack_timeout = Millis(30'000);
  auto* c = queue->add_subcommand("consume", "Run a command for each message, with it on stdin");
  add_name(c, *consume);
  add_duration(c, "--ack-timeout", consume->ack_timeout,
               "Lease per message, renewed every DUR/3 while the command runs (default 30s)",
               positive("30s"));
  add_max_attempts(c, *consume);
  c->add_option("--max-messages", consume->max_messages, "Exit after N messages")
      ->type_name("N")
      ->transform(decimal_in(1, kMaxLuaCount));
  add_duration(c, "--idle-exit", consume->idle_exit, "Exit 0 when no message came for DUR");
  add_duration(c, "--retry-delay", consume->retry_delay,
               "A failed message is ready again only after DUR (default 0)");
  add_duration(c, "--kill-grace", consume->kill_grace,
               "On lease loss, SIGKILL the command this long after SIGTERM (default: 10s or "
               "--ack-timeout/3, whichever is shorter)");
  add_max_run_option(c, consume->max_run,
                     "Stop the command if one message takes longer than DUR (SIGTERM, SIGKILL "
                     "after --kill-grace) and nack it, as a failure with code 124; consume goes "
                     "on with the next message (exit 124 only when it was the last under "
                     "--max-messages)");
  c->add_option("command", consume->command, "The command and its arguments, after --")->required();
  c->footer(
      "Example: rcoord queue consume jobs --ack-timeout 5m -- ./handle.sh\n"
      "         rcoord queue consume jobs --max-run 10m --max-attempts 3 -- ./handle.sh\n"
      "Exit 0 acks the message, any other code nacks it. The command gets RCOORD_QUEUE,\n"
      "RCOORD_MESSAGE_ID and RCOORD_ATTEMPT. SIGTERM: finish the current message, then exit.\n"
      "Exit 0 after --idle-exit or a signal; with --max-messages, the last command's code\n"
      "(124 if --max-run stopped it: --max-run is per message, never the consumer's exit).\n"
      "Under systemd ($NOTIFY_SOCKET) it sends STATUS=, READY=1, WATCHDOG=1 and STOPPING=1;\n"
      "a W3C $TRACEPARENT goes into its history events and on to the command.");
  on_parse(c, ctx, consume, run_consume);

  auto len = std::make_shared<QueueArgs>();
  auto* l = queue->add_subcommand("len", "Print how many messages wait (ready + delayed)");
  add_name(l, *len);
  l->footer("Example: rcoord queue len jobs");
  on_parse(l, ctx, len, run_len);

  auto peek = std::make_shared<QueueArgs>();
  auto* e = queue->add_subcommand("peek", "Show the next ready messages without taking them");
  add_name(e, *peek);
  add_count(e, *peek, "Show up to N messages (default 1)");
  add_nul(e, *peek, "End each message with NUL instead of newline");
  e->add_flag("--in-flight", peek->in_flight,
              "List the messages in flight instead, with who leased them and for how long");
  e->footer("Example: rcoord queue peek jobs --count 10; rcoord queue peek jobs --in-flight");
  on_parse(e, ctx, peek, run_peek);

  auto stats = std::make_shared<QueueArgs>();
  auto* s = queue->add_subcommand("stats", "Count ready, delayed, in-flight and dead messages");
  add_name(s, *stats);
  add_watch_option(s, stats->watch);
  s->footer("Example: rcoord queue stats jobs --json");
  on_parse(s, ctx, stats, run_stats);

  auto dead = std::make_shared<QueueArgs>();
  auto* d = queue->add_subcommand("dead", "List dead messages (delivered --max-attempts times)");
  add_name(d, *dead);
  add_count(d, *dead, "List at most N (default all)")->each([dead](const std::string&) {
    dead->count_given = true;
  });
  add_nul(d, *dead, "End each message with NUL instead of newline");
  d->footer("Example: rcoord --json queue dead jobs | jq -r .id");
  on_parse(d, ctx, dead, run_dead);

  auto replay = std::make_shared<QueueArgs>();
  auto* r = queue->add_subcommand("replay", "Put dead messages back on the queue");
  add_name(r, *replay);
  r->add_option("ids", replay->items, "Ids of dead messages; none: all of them");
  r->footer("Example: rcoord queue replay jobs 17 42");
  on_parse(r, ctx, replay, run_replay);

  auto purge = std::make_shared<QueueArgs>();
  auto* u = queue->add_subcommand("purge", "Delete waiting messages, or with --dead the dead ones");
  add_name(u, *purge);
  u->add_flag("--dead", purge->dead, "Delete the dead messages instead");
  u->footer("Example: rcoord queue purge jobs --dead");
  on_parse(u, ctx, purge, run_purge);
}

}  // namespace rcoord::cmd
