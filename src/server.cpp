#include "server.hpp"

#include <chrono>
#include <string_view>

namespace rcoord::server {
namespace {

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

}  // namespace

Ping ping(Connection& conn) {
  conn.ensure_connected();
  auto start = std::chrono::steady_clock::now();
  conn.command({"PING"});
  auto rtt = std::chrono::steady_clock::now() - start;
  Reply info = conn.command({"INFO", "server"});
  std::string text = reply_string(info.get());
  Ping p;
  p.url = conn.endpoint().describe();
  p.version = info_field(text, "valkey_version");
  if (p.version.empty()) p.version = info_field(text, "redis_version");
  p.mode = info_field(text, "redis_mode");
  if (p.mode.empty()) p.mode = "standalone";
  p.rtt_us = std::chrono::duration_cast<std::chrono::microseconds>(rtt).count();
  return p;
}

}  // namespace rcoord::server
