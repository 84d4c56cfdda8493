#include "ops_command.hpp"

#include <fmt/format.h>

#include "text.hpp"

namespace rcoord::server {

void to_json(nlohmann::ordered_json& j, const Ping& r) {
  j = {{"url", r.url}, {"version", r.version}, {"mode", r.mode}, {"rtt_us", r.rtt_us}};
  if (r.nodes.empty()) return;
  auto& nodes = j["nodes"] = nlohmann::ordered_json::array();
  for (const auto& n : r.nodes) {
    nlohmann::ordered_json node = {{"address", n.address}, {"role", n.role}, {"rtt_us", n.rtt_us}};
    if (!n.error.empty()) node["error"] = n.error;
    nodes.push_back(std::move(node));
  }
}

// `node: ADDRESS ROLE RTT` lines follow the summary, one per server of the setup.
std::string to_text(const Ping& r) {
  std::string text = fmt::format("url: {}\nversion: {}\nmode: {}\nrtt_us: {}\n", escape_text(r.url),
                                 escape_text(r.version), r.mode, r.rtt_us);
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

void to_json(nlohmann::ordered_json& j, const Object& r) {
  j = {{"type", r.type}, {"name", r.name}, {"state", r.state}};
  if (r.expires_in_ms >= 0) j["expires_in_ms"] = r.expires_in_ms;
}

std::string to_text(const Object& r) {
  return fmt::format("{:<9} {}  {}", r.type, escape_text(r.name), escape_text(r.state));
}

}  // namespace rcoord::inventory

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

void add_ops(CLI::App& app, Context& ctx) {
  auto* ping = app.add_subcommand("ping", "Check the server: version, mode, round-trip time");
  ping->footer("Example: rcoord ping --url redis://10.0.0.5:6379");
  ping->callback([&ctx] {
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
};

void add_ls(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<LsArgs>();
  auto* ls = app.add_subcommand("ls", "List the objects rcoord keeps, with type and state");
  ls->add_option("pattern", args->pattern, "Glob over whole object names (default *)");
  std::string types;
  for (const auto& t : inventory::types()) types += (types.empty() ? "" : "|") + t;
  ls->add_option("--type", args->type, "Only objects of this type")
      ->type_name(types)
      ->check(CLI::IsMember(inventory::types()).description(""));
  ls->footer(
      "Found with SCAN (never KEYS), so a large keyspace is walked without blocking the server.\n"
      "Names are printed escaped (\\n for a newline, \\\\ for a backslash).\n"
      "Example: rcoord ls 'deploy-*' --type lock");
  ls->callback([&ctx, args] {
    ctx.action = [&ctx, args] {
      std::size_t n = inventory::list(ctx.conn(), ctx.keys(), args->pattern, args->type,
                                      [&](const inventory::Object& o) { ctx.out().emit(o); });
      if (n == 0) ctx.out().note("rcoord: no objects match");
      return n > 0 ? 0 : 1;
    };
  });
}

}  // namespace rcoord::cmd
