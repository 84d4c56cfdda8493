#include "ops_command.hpp"

#include <fmt/format.h>

namespace rcoord::server {

void to_json(nlohmann::ordered_json& j, const Ping& r) {
  j = {{"url", r.url}, {"version", r.version}, {"mode", r.mode}, {"rtt_us", r.rtt_us}};
}

std::string to_text(const Ping& r) {
  return fmt::format("url: {}\nversion: {}\nmode: {}\nrtt_us: {}\n", r.url, r.version, r.mode,
                     r.rtt_us);
}

}  // namespace rcoord::server

namespace rcoord::doctor {

void to_json(nlohmann::ordered_json& j, const Finding& r) {
  j = {{"check", r.check}, {"ok", r.ok}, {"detail", r.detail}, {"fix", r.fix}};
}

std::string to_text(const Finding& r) {
  if (r.ok) return fmt::format("ok    {}: {}", r.check, r.detail);
  return fmt::format("FAIL  {}: {}\n      fix: {}", r.check, r.detail, r.fix);
}

}  // namespace rcoord::doctor

namespace rcoord::cmd {

void add_ops(CLI::App& app, Context& ctx) {
  auto* ping = app.add_subcommand("ping", "Check the server: version, mode, round-trip time");
  ping->footer("Example: rcoord ping --url redis://10.0.0.5:6379");
  ping->callback([&ctx] {
    ctx.action = [&ctx] {
      ctx.out().emit(server::ping(ctx.conn()));
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

}  // namespace rcoord::cmd
