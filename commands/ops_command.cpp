#include "ops_command.hpp"

#include <fmt/format.h>

#include <set>
#include <utility>
#include <vector>

#include "text.hpp"
#include "top_view.hpp"
#include "watch.hpp"

namespace rcoord::server {

namespace {

// JSON times are whole milliseconds (`*_ms`): a round trip is rounded up, so that one that
// took any time at all is never shown as 0; -1 (no answer) stays -1.
std::int64_t rtt_ms(std::int64_t rtt_us) { return rtt_us < 0 ? -1 : (rtt_us + 999) / 1000; }

}  // namespace

// rtt_us: the microseconds of rtt_ms, kept one release (deprecated).
void to_json(nlohmann::ordered_json& j, const Ping& r) {
  j = {{"url", r.url},   {"server", r.server},         {"version", r.version},
       {"mode", r.mode}, {"rtt_ms", rtt_ms(r.rtt_us)}, {"rtt_us", r.rtt_us}};
  if (r.nodes.empty()) return;
  auto& nodes = j["nodes"] = nlohmann::ordered_json::array();
  for (const auto& n : r.nodes) {
    nlohmann::ordered_json node = {{"address", n.address},
                                   {"role", n.role},
                                   {"rtt_ms", rtt_ms(n.rtt_us)},
                                   {"rtt_us", n.rtt_us}};
    if (!n.error.empty()) node["error"] = n.error;
    nodes.push_back(std::move(node));
  }
}

// `node: ADDRESS ROLE RTT` lines follow the summary, one per server of the setup.
std::string to_text(const Ping& r) {
  std::string text =
      fmt::format("url: {}\nserver: {}\nversion: {}\nmode: {}\nrtt_us: {}\n", escape_text(r.url),
                  escape_text(r.server), escape_text(r.version), r.mode, r.rtt_us);
  if (!r.nodes.empty()) text += fmt::format("nodes: {}\n", r.nodes.size());
  for (const auto& n : r.nodes) {
    if (n.rtt_us >= 0) {
      text += fmt::format("node: {} {} rtt_us={}\n", escape_text(n.address), n.role, n.rtt_us);
    } else {
      text += fmt::format("node: {} {} down ({})\n", escape_text(n.address), n.role,
                          escape_text(n.error));
    }
  }
  return text;
}

}  // namespace rcoord::server

namespace rcoord::inventory {

// The prose `state` for people, and its parts as fields for programs (as `top -o json`):
// null where a field means nothing for the type. expires_in_ms only for what expires.
void to_json(nlohmann::ordered_json& j, const Object& r) {
  auto or_null = [](std::int64_t v) {
    return v < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(v);
  };
  j = {{"type", r.type}, {"name", r.name}, {"state", r.state}};
  j["holder"] = r.holder.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.holder);
  j["waiting"] = or_null(r.waiting);
  j["ttl_ms"] = or_null(r.ttl_ms);
  if (r.expires_in_ms >= 0) j["expires_in_ms"] = r.expires_in_ms;
}

std::string to_text(const Object& r) { return cmd::listed_line(r, 0); }

}  // namespace rcoord::inventory

namespace rcoord::removal {

void to_json(nlohmann::ordered_json& j, const Removed& r) {
  j = {{"type", r.type}, {"name", r.name}, {"removed", r.removed}, {"keys", r.keys}};
  if (r.dry_run) j["would_remove"] = r.would_remove;
  j["reason"] = r.reason;
}

// One line per object: what happened to it, and why when it was not removed.
std::string to_text(const Removed& r) {
  std::string what = fmt::format("{} {}", r.type, escape_text(r.name));
  if (r.removed) return fmt::format("removed {} ({} keys)", what, r.keys);
  if (r.would_remove) return fmt::format("would remove {} ({} keys)", what, r.keys);
  return fmt::format("kept {}: {}", what, escape_text(r.reason));
}

}  // namespace rcoord::removal

namespace rcoord::doctor {

void to_json(nlohmann::ordered_json& j, const Finding& r) {
  j = {{"check", r.check}, {"ok", r.ok}, {"detail", r.detail}, {"fix", r.fix}};
}

std::string to_text(const Finding& r) {
  if (r.ok) return fmt::format("ok    {}: {}", r.check, escape_text(r.detail));
  return fmt::format("FAIL  {}: {}\n      fix: {}", r.check, escape_text(r.detail),
                     escape_text(r.fix));
}

}  // namespace rcoord::doctor

namespace rcoord::cmd {

std::string listed_name(std::string_view name) {
  std::string shown = escape_text(name);
  if (shown.find_first_of(" '\"") == std::string::npos) return shown;
  std::string quoted = "'";
  for (char c : shown) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string listed_line(const inventory::Object& o, int name_width) {
  std::string name = listed_name(o.name);
  int pad = std::max(0, name_width - top::columns(name));
  return fmt::format("{:<9} {}{}  {}", o.type, name,
                     std::string(static_cast<std::size_t>(pad), ' '), escape_text(o.state));
}

namespace {

// ls's text listing, NAME as wide as the widest name. Rows are held until kHeld of them have
// come (or the listing ends) to measure them; later rows keep that width, a longer name only
// pushing its own line, so that memory stays flat however many objects there are.
class ListedTable {
 public:
  explicit ListedTable(Printer& out) : out_(out) {}
  void add(const inventory::Object& o) {
    if (measured_) {
      out_.write_text(listed_line(o, width_));
      return;
    }
    width_ = std::max(width_, top::columns(listed_name(o.name)));
    held_.push_back(o);
    if (held_.size() >= kHeld) flush();
  }
  void flush() {
    for (const auto& o : held_) out_.write_text(listed_line(o, width_));
    held_.clear();
    measured_ = true;
  }

 private:
  static constexpr std::size_t kHeld = 1000;
  Printer& out_;
  std::vector<inventory::Object> held_;
  int width_ = 0;
  bool measured_ = false;
};

}  // namespace

void add_ops(CLI::App& app, Context& ctx) {
  auto* ping = app.add_subcommand("ping", "Check the server: version, mode, round-trip time");
  ping->footer("Example: rcoord ping --url redis://10.0.0.5:6379");
  ping->callback([&ctx] {
    ctx.allow_several_urls();  // each node of a Redlock, one line each
    ctx.action = [&ctx] {
      const auto& nodes = ctx.settings().endpoints;
      if (nodes.size() > 1) {
        ctx.out().emit(server::ping_nodes(nodes, ctx.settings().timeout));
      } else {
        ctx.out().emit(server::ping(ctx.conn()));
      }
      return 0;
    };
  });
}

void add_doctor(CLI::App& app, Context& ctx) {
  auto* doctor = app.add_subcommand(
      "doctor", "Check what makes coordination unsafe on this server, and how to fix it");
  doctor->footer(
      "Checks: eviction policy, persistence, replication role and lag, cluster slot coverage,\n"
      "and the permissions rcoord needs. Exit 0 when nothing is unsafe, 1 otherwise.\n"
      "Example: rcoord doctor --url redis://10.0.0.5:6379");
  doctor->callback([&ctx] {
    ctx.action = [&ctx] {
      bool healthy = true;
      for (const auto& finding : doctor::examine(ctx.conn(), ctx.keys())) {
        ctx.out().emit(finding);
        healthy = healthy && finding.ok;
      }
      return healthy ? 0 : 1;
    };
  });
}

struct LsArgs {
  std::string pattern = "*";
  std::string type;
  bool names = false;
  std::optional<Millis> watch;
};

void add_type_option(CLI::App* verb, std::string& type) {
  std::string types;
  for (const auto& t : inventory::types()) types += (types.empty() ? "" : "|") + t;
  verb->add_option("--type", type, "Only objects of this type")
      ->type_name(types)
      ->check(CLI::IsMember(inventory::types()).description(""));
}

// One listing: every object with its state, or (--names) only its name, read without its
// state, one per line and each name once however many types use it.
int list_once(Context& ctx, const LsArgs& args) {
  inventory::Query query{args.pattern, args.type, !args.names};
  std::set<std::string> named;
  ListedTable table(ctx.out());
  auto each = [&](const inventory::Object& o) {
    if (!args.names && ctx.out().json()) {
      ctx.out().emit(o);
    } else if (!args.names) {
      table.add(o);
    } else if (ctx.out().json()) {
      ctx.out().write_json({{"type", o.type}, {"name", o.name}});
    } else if (named.insert(o.name).second) {
      ctx.out().write_text(escape_text(o.name));
    }
  };
  std::size_t n = 0;
  try {
    n = inventory::list(ctx.conn(), ctx.keys(), query, each);
  } catch (const Error&) {
    table.flush();  // what the other masters gave is listed before the error is told
    throw;
  }
  table.flush();
  if (n == 0) ctx.out().note("rcoord: no objects match");
  return n > 0 ? 0 : 1;
}

void add_ls(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<LsArgs>();
  auto* ls = app.add_subcommand("ls", "List the objects rcoord keeps, with type and state");
  ls->add_option("pattern", args->pattern, "Glob over whole object names (default *)");
  add_type_option(ls, args->type);
  ls->add_flag("--names", args->names,
               "Print only the names, one per line (escaped: \\n for a newline, \\\\ for a "
               "backslash); no state is read");
  add_watch_option(ls, args->watch);
  ls->footer(
      "Found with SCAN (never KEYS), so a large keyspace is walked without blocking the server;\n"
      "the states of the objects found are read in pipelined batches.\n"
      "Names are printed escaped (\\n for a newline, \\\\ for a backslash), and in single\n"
      "quotes when they hold a space or a quote ('nightly backup').\n"
      "Examples:\n"
      "  rcoord ls 'deploy-*' --type lock\n"
      "  rcoord ls --names --type queue\n"
      "  rcoord ls --type sem --watch 2s");
  ls->callback([&ctx, args] {
    ctx.action = [&ctx, args] {
      return run_watched(ctx, args->watch, [&ctx, args] { return list_once(ctx, *args); });
    };
  });
}

struct RmArgs {
  std::vector<std::string> names;
  std::string type;
  bool force = false;
  bool dry_run = false;
};

int run_rm(Context& ctx, const RmArgs& args) {
  removal::Options opts{args.force, args.dry_run, ctx.who()};
  bool all = true;
  for (const auto& name : args.names) {
    auto r = removal::remove(ctx.conn(), ctx.keys(), args.type, name, opts);
    emit_made(ctx, r,
              r.removed ? fmt::format("{} '{}': removed", object_noun(args.type), name) : "");
    if (r.removed || r.would_remove) continue;
    all = false;
    if (r.absent) {
      ctx.out().note(fmt::format("rcoord: no {} '{}' to remove", object_noun(args.type), name));
    } else {
      ctx.out().note(
          fmt::format("rcoord: {} '{}' is in use: {}; nothing of it was removed (use "
                      "--force to remove it anyway)",
                      object_noun(args.type), name, r.reason));
    }
  }
  return all ? 0 : 1;
}

void add_rm(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<RmArgs>();
  auto* rm = app.add_subcommand("rm", "Delete every key of objects (refuses what is in use)");
  rm->add_option("names", args->names, "Object names")->required();
  std::string types;
  for (const auto& t : inventory::types()) types += (types.empty() ? "" : "|") + t;
  rm->add_option("--type", args->type, "The objects' type")
      ->type_name(types)
      ->required()
      ->check(CLI::IsMember(inventory::types()).description(""));
  rm->add_flag("--force", args->force,
               "Also remove a held lock, a semaphore with holders, an election with a leader, a "
               "queue with messages in flight");
  rm->add_flag("--dry-run", args->dry_run, "Print what would be removed; remove nothing");
  rm->footer(
      "A lock's fence, an election's term and a queue's message ids keep counting, so none is\n"
      "ever handed out twice. An object removed while in use (--force) keeps its history,\n"
      "with a `removed` event naming who removed it and what it held. Exit 0 when every\n"
      "object was removed, 1 when any was in use or absent.\n"
      "Examples: rcoord rm visitors:2026-10-01 visitors:2026-10-02 --type pf\n"
      "          rcoord rm deploy --type lock --dry-run");
  rm->callback([&ctx, args] { ctx.action = [&ctx, args] { return run_rm(ctx, *args); }; });
}

}  // namespace rcoord::cmd
