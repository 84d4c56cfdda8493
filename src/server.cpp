#include "server.hpp"

#include <fmt/format.h>

#include <chrono>
#include <string_view>

#include "cluster.hpp"
#include "errors.hpp"

namespace rcoord::server {
namespace {

using Clock = std::chrono::steady_clock;

// INFO replies are `field:value` lines; returns the value of `field`, or "".
std::string info_field(std::string_view info, std::string_view field) {
  std::size_t pos = 0;
  while (pos < info.size()) {
    auto end = info.find("\r\n", pos);
    std::string_view line = info.substr(pos, end == std::string_view::npos ? end : end - pos);
    if (line.size() > field.size() && line.substr(0, field.size()) == field &&
        line[field.size()] == ':') {
      return std::string(line.substr(field.size() + 1));
    }
    if (end == std::string_view::npos) break;
    pos = end + 2;
  }
  return {};
}

// One PING round trip on a connected connection, in microseconds.
std::int64_t time_ping(Connection& conn) {
  auto start = Clock::now();
  conn.command({"PING"});
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
}

// The server's version in an INFO server reply: valkey_version, else redis_version.
std::string version_in(std::string_view info) {
  std::string version = info_field(info, "valkey_version");
  return version.empty() ? info_field(info, "redis_version") : version;
}

// Connects to `ep` and times a PING; a node that does not answer gets rtt -1 and the reason.
// With `version`, the server's version is read on the same connection.
Node probe(const Endpoint& ep, std::string role, Millis timeout, std::string* version = nullptr) {
  Node n;
  n.address = ep.describe();
  n.role = std::move(role);
  try {
    Connection conn(ep, timeout);
    conn.ensure_connected();
    n.rtt_us = time_ping(conn);
    if (version != nullptr) {
      *version = version_in(reply_string(conn.command({"INFO", "server"}).get()));
    }
  } catch (const Error& e) {
    n.rtt_us = -1;
    n.error = e.what();
  }
  return n;
}

}  // namespace

Ping ping(Connection& conn) {
  conn.ensure_connected();
  Ping p;
  p.rtt_us = time_ping(conn);
  Reply info = conn.command({"INFO", "server"});
  std::string text = reply_string(info.get());
  p.url = conn.endpoint().describe();
  p.version = version_in(text);
  p.mode = info_field(text, "redis_mode");
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
    Node n = probe(ep, "node", timeout, answered == 0 ? &p.version : nullptr);
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
