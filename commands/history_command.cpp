#include "history_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "deprecated_wait.hpp"
#include "errors.hpp"
#include "holder_view.hpp"
#include "identity.hpp"
#include "keys.hpp"
#include "lock_target.hpp"
#include "options.hpp"
#include "redlock.hpp"
#include "signals.hpp"
#include "text.hpp"

namespace rcoord::cmd {
namespace {

using Clock = std::chrono::steady_clock;

// The types that keep a history, as `--type` names them.
const std::vector<std::string> kTypes = {"lock", "sem", "elect", "queue"};

struct HistoryArgs {
  std::string name;
  std::string type;
  std::optional<std::int64_t> limit;
  std::optional<Millis> since;
  bool follow = false;
  std::optional<Millis> timeout;
};

// Fields whose values are numbers, shown as numbers in JSON.
bool numeric_field(std::string_view name) {
  static constexpr std::string_view kNumeric[] = {"fence",   "term",      "held_ms",
                                                  "kept_ms", "waited_ms", "exit_code",
                                                  "readers", "attempts",  "permits"};
  return std::find(std::begin(kNumeric), std::end(kNumeric), name) != std::end(kNumeric);
}

std::optional<std::int64_t> as_integer(const std::string& text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

nlohmann::ordered_json event_json(const history::Event& e, const std::string& type,
                                  const std::string& name) {
  nlohmann::ordered_json j;
  j["at"] = rfc3339(e.at);
  j["event"] = e.event;
  j["type"] = type;
  j["name"] = name;
  if (e.who.known()) add_identity(j, e.who);
  if (!e.token.empty()) j["token"] = e.token;
  for (const auto& [field, value] : e.fields) {
    auto number = numeric_field(field) ? as_integer(value) : std::nullopt;
    if (number) {
      j[field] = *number;
    } else {
      j[field] = value;
    }
  }
  if (!e.held_by.empty()) {
    nlohmann::ordered_json holder;
    add_identity(holder, unpack(e.held_by));
    j["held_by"] = holder;
  }
  j["event_id"] = e.id;
  return j;
}

// The type of `name` (--type, else the one type that has it). Throws Error(kUsage) when
// several do, Error(kNo) when none does (with --type and --follow, it may come later).
std::string type_of(Context& ctx, const HistoryArgs& a) {
  if (!a.type.empty()) {
    // Followed, an object that does not exist yet is waited for.
    if (a.follow || !history::types_present(ctx.conn(), ctx.keys(), {a.type}, a.name).empty()) {
      return a.type;
    }
    throw Error(kNo, fmt::format("no {} '{}' has a history", object_noun(a.type), a.name),
                "check the name, --prefix and --type; with --history 0 nothing is recorded");
  }
  std::vector<std::string> found = history::types_present(ctx.conn(), ctx.keys(), kTypes, a.name);
  if (found.size() == 1) return found.front();
  if (found.empty()) {
    throw Error(kNo,
                fmt::format("no lock, semaphore, election or queue '{}' has a history", a.name),
                "check the name and --prefix; with --history 0 nothing is recorded");
  }
  throw Error(kUsage, fmt::format("'{}' is the name of a {}", a.name, fmt::join(found, " and a ")),
              fmt::format("say which with --type {}", fmt::join(found, " or --type ")));
}

void print(Context& ctx, const history::Event& e, const std::string& type,
           const std::string& name) {
  if (ctx.out().json()) {
    ctx.out().write_json(event_json(e, type, name));
  } else {
    ctx.out().write_text(history_line(e));
  }
}

// --follow: a blocking read after the newest entry, again and again, until Ctrl-C or
// --wait (exit 0 either way).
int follow(Context& ctx, const std::string& key, std::string after, const std::string& type,
           const HistoryArgs& a) {
  signals::install();
  bool endless = !a.timeout || *a.timeout == Millis::max();  // --wait forever, or none
  auto deadline = endless ? Clock::time_point::max() : Clock::now() + *a.timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
    if (left.count() <= 0) return kYes;
    std::vector<history::Event> events;
    try {
      events = history::read_after(ctx.conn(), key, after, std::min(left, Millis(60'000)));
    } catch (const Error& e) {
      if (e.code() == kInterrupted) return kYes;
      throw;
    }
    if (signals::pending() != 0) return kYes;
    for (const auto& e : events) {
      print(ctx, e, type, a.name);
      after = e.id;
    }
  }
}

// A Redlock's lock (several --url): what a majority of its nodes recorded.
int run_redlock_history(Context& ctx, const HistoryArgs& a) {
  if (!a.type.empty() && a.type != "lock") {
    throw Error(kUsage, "several --url name the nodes of a Redlock, which only locks use",
                "give one --url for the history of a " + std::string(object_noun(a.type)));
  }
  if (a.follow) {
    throw Error(kUsage, "--follow reads one server; a Redlock's history is merged from several",
                "follow one node (one --url), or leave out --follow");
  }
  const Settings& s = ctx.settings();
  redlock::Redlock nodes(s.endpoints, s.timeout, ctx.keys());
  std::optional<std::int64_t> since_ms;
  if (a.since) since_ms = history::server_ms(ctx.conn()) - a.since->count();
  auto events = nodes.history(a.name, since_ms, a.limit);
  if (events.empty()) {
    throw Error(kNo, fmt::format("no lock '{}' has a history on a majority of the nodes", a.name),
                "check the name and --prefix; with --history 0 nothing is recorded");
  }
  for (const auto& e : events) print(ctx, e, "lock", a.name);
  return kYes;
}

int run_history(Context& ctx, const HistoryArgs& a) {
  // An empty name is a usage error, as for every other verb (not "no such object").
  check_name(a.type.empty() ? std::string_view("object") : object_noun(a.type), a.name);
  // Without --follow nothing waits: a --wait given there was a mistake, not a no-op.
  if (a.timeout && !a.follow) {
    throw Error(kUsage, "--wait only applies with --follow (a plain history read does not wait)",
                "add --follow to print new events for that long, or leave out --wait");
  }
  if (lock::on_redlock(ctx.settings())) return run_redlock_history(ctx, a);
  std::string type = type_of(ctx, a);
  std::string key = ctx.keys().history(type, a.name);
  std::optional<std::int64_t> since_ms;
  if (a.since) since_ms = history::server_ms(ctx.conn()) - a.since->count();
  history::Page page = history::read(ctx.conn(), key, since_ms, a.limit);
  for (const auto& e : page.events) print(ctx, e, type, a.name);
  if (a.follow) return follow(ctx, key, page.last_id, type, a);
  return kYes;
}

}  // namespace

std::string history_line(const history::Event& e) {
  // Everything here was read back from the stream, which any caller writes to: each part is
  // escaped (no terminal escape, no second line), and a value that could pass for more than
  // one (a space, a quote, an '=') is quoted, as a note always is.
  auto value_text = [](std::string_view v) {
    return v.empty() || v.find_first_of(" \"=") != std::string_view::npos ? quote_text(v)
                                                                          : escape_text(v);
  };
  std::string line = fmt::format("{}  {:<8}", rfc3339(e.at), escape_text(e.event));
  std::string who = describe(e.who);
  line += "  ";
  line += who.empty() ? "-" : escape_text(who);
  for (const auto& [field, value] : e.fields) {
    line += fmt::format(" {}={}", escape_text(field), value_text(value));
  }
  if (!e.held_by.empty()) {
    std::string holder = describe(unpack(e.held_by));
    if (!holder.empty()) line += " held by " + escape_text(holder);
  }
  if (!e.who.note.empty()) line += fmt::format(" note={}", quote_text(e.who.note));
  if (!e.who.trace_id.empty()) line += fmt::format(" trace_id={}", escape_text(e.who.trace_id));
  if (!e.token.empty()) line += fmt::format(" token={}", value_text(e.token));
  return line;
}

void add_history(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<HistoryArgs>();
  auto* h = app.add_subcommand(
      "history", "Print what happened to a lock, semaphore, election or queue, oldest first");
  // A Redlock's lock: its nodes' histories, merged.
  h->preparse_callback([&ctx](std::size_t) { ctx.allow_several_urls(); });
  h->add_option("name", args->name, "Object name")->required();
  h->add_option("--type", args->type, "The object's type (needed when several types use NAME)")
      ->type_name("lock|sem|elect|queue")
      ->check(CLI::IsMember(kTypes).description(""));
  h->add_option("--limit", args->limit, "Only the N most recent events")
      ->type_name("N")
      ->transform(decimal_in(1, 1'000'000));
  add_duration(h, "--since", args->since, "Only events of the last DUR (by the server's clock)");
  h->add_flag("--follow,-f", args->follow,
              "Go on printing events as they happen (a blocking read) until Ctrl-C or --wait");
  // --wait, as every verb that waits; the verb-level --timeout it replaces stays one release
  // as a deprecated spelling (it hid the global I/O --timeout after this verb).
  auto* wait =
      add_wait(h, "-w,--wait", args->timeout,
               "With --follow, stop after DUR (or never: forever, the default) and exit 0");
  add_deprecated_wait(h, "--timeout", wait, args->timeout, ctx);
  h->footer(
      "Each lock, semaphore, election and queue keeps its last --history events (default 100)\n"
      "for 7 days after the newest. Exit 0 when the object has a history (even if no event\n"
      "matches), 1 when it has none, 2 when NAME is used by several types and --type is not\n"
      "given.\n"
      "Examples:\n"
      "  rcoord history nightly-backup\n"
      "  rcoord history nightly-backup --since 24h --type lock\n"
      "  rcoord -o json history jobs --type queue --follow --wait 10m");
  on_parse(h, ctx, args, run_history);
}

}  // namespace rcoord::cmd
