#include "server.hpp"

#include <fmt/format.h>

#include <chrono>
#include <string_view>

#include "cluster.hpp"
#include "errors.hpp"

namespace rcoord::server {
namespace {

using Clock = std::chrono::steady_clock;

// One PING round trip on a connected connection, in microseconds.
std::int64_t time_ping(Connection& conn) {
  auto start = Clock::now();
  conn.command({"PING"});
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
}

// Connects to `ep` and times a PING; a node that does not answer gets rtt -1 and the reason.
// With `about`, the server's version and flavour are read on the same connection.
Node probe(const Endpoint& ep, std::string role, Millis timeout, Ping* about = nullptr) {
  Node n;
  n.address = ep.describe();
  n.role = std::move(role);
  try {
    Connection conn(ep, timeout);
    conn.ensure_connected();
    n.rtt_us = time_ping(conn);
    if (about != nullptr) {
      auto info = parse_info(reply_string(conn.command({"INFO", "server"}).get()));
      about->version = version_in(info);
      about->server = server_in(info);
    }
  } catch (const Error& e) {
    n.rtt_us = -1;
    n.error = e.what();
  }
  return n;
}

}  // namespace

InfoFields parse_info(std::string_view text) {
  InfoFields fields;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find("\r\n", pos);
    std::string_view line = text.substr(pos, end == std::string_view::npos ? end : end - pos);
    auto colon = line.find(':');
    if (colon != std::string_view::npos && line[0] != '#') {
      fields[std::string(line.substr(0, colon))] = std::string(line.substr(colon + 1));
    }
    if (end == std::string_view::npos) break;
    pos = end + 2;
  }
  return fields;
}

std::string info_value(const InfoFields& fields, std::string_view field) {
  auto it = fields.find(field);
  return it == fields.end() ? std::string{} : it->second;
}

std::string version_in(const InfoFields& info) {
  std::string version = info_value(info, "valkey_version");
  return version.empty() ? info_value(info, "redis_version") : version;
}

std::string mode_in(const InfoFields& info) {
  std::string mode = info_value(info, "redis_mode");
  return mode.empty() ? info_value(info, "server_mode") : mode;
}

std::string server_in(const InfoFields& info) {
  std::string version = version_in(info);
  if (version.empty()) return {};
  bool valkey =
      info_value(info, "server_name") == "valkey" || !info_value(info, "valkey_version").empty();
  return fmt::format("{} {}", valkey ? "Valkey" : "Redis", version);
}

Ping ping(Connection& conn) {
  conn.ensure_connected();
  Ping p;
  p.rtt_us = time_ping(conn);
  Reply info = conn.command({"INFO", "server"});
  InfoFields fields = parse_info(reply_string(info.get()));
  p.url = conn.endpoint().describe();
  p.version = version_in(fields);
  p.server = server_in(fields);
  p.mode = mode_in(fields);
  if (p.mode.empty()) p.mode = "standalone";
  if (p.mode == "cluster") {
    if (auto masters = cluster::masters(conn)) {
      for (const auto& ep : *masters) p.nodes.push_back(probe(ep, "master", conn.timeout()));
    }
  }
  const auto& sentinel = conn.endpoint().sentinel;
  if (!sentinel.sentinels.empty()) {
    p.mode = "sentinel";
    p.nodes.push_back({p.url, "master", p.rtt_us, {}});
    for (const auto& address : sentinel.sentinels) {
      p.nodes.push_back(
          probe(sentinel_endpoint(conn.endpoint(), address), "sentinel", conn.timeout()));
    }
  }
  return p;
}

Ping ping_nodes(const std::vector<Endpoint>& endpoints, Millis timeout) {
  Ping p;
  p.mode = "redlock";
  std::size_t answered = 0;
  for (const auto& ep : endpoints) {
    // The first node that answers is the one the summary lines describe.
    Node n = probe(ep, "node", timeout, answered == 0 ? &p : nullptr);
    if (n.rtt_us >= 0 && answered++ == 0) {
      p.url = n.address;
      p.rtt_us = n.rtt_us;
    }
    p.nodes.push_back(std::move(n));
  }
  if (answered == 0) {
    throw Error(kConnection, fmt::format("none of the {} Redis nodes answered", endpoints.size()),
                "check the --url addresses");
  }
  return p;
}

}  // namespace rcoord::server
