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

}  // namespace rcoord::cmd
