#include "cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <tuple>

#include "errors.hpp"
#include "redirect.hpp"

namespace rcoord::cluster {
namespace {

// CRC16-CCITT (XMODEM), the checksum Redis Cluster maps keys to slots with.
constexpr std::array<std::uint16_t, 256> make_crc_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned i = 0; i < 256; ++i) {
    auto crc = static_cast<std::uint16_t>(i << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    table[i] = crc;
  }
  return table;
}
constexpr auto kCrcTable = make_crc_table();

std::uint16_t crc16(std::string_view data) {
  std::uint16_t crc = 0;
  for (unsigned char c : data) {
    crc = static_cast<std::uint16_t>((crc << 8) ^ kCrcTable[((crc >> 8) ^ c) & 0xff]);
  }
  return crc;
}

}  // namespace

int key_slot(std::string_view key) {
  auto open = key.find('{');
  if (open != std::string_view::npos) {
    auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close != open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return crc16(key) & (kSlots - 1);
}

std::optional<std::vector<Endpoint>> masters(Connection& conn) {
  Reply r = conn.command_raw({"CLUSTER", "NODES"});
  if (r->type == REDIS_REPLY_ERROR) {
    std::string_view msg(r->str, r->len);
    // Standalone ("cluster support disabled"), or a user without the right to ask.
    if (msg.find("cluster support disabled") != std::string_view::npos ||
        msg.starts_with("NOPERM") || msg.starts_with("ERR unknown command")) {
      return std::nullopt;
    }
    check_reply(r, "CLUSTER NODES");
  }
  std::string text = reply_string(r.get());
  std::vector<Endpoint> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // <id> <ip:port@cport[,hostname]> <flags> <master> ...
    std::istringstream fields(line);
    std::string id;
    std::string address;
    std::string flags;
    fields >> id >> address >> flags;
    std::string with_flags = "," + flags + ",";
    if (with_flags.find(",master,") == std::string::npos) continue;
    if (with_flags.find(",noaddr,") != std::string::npos) continue;
    address = address.substr(0, address.find('@'));
    Redirect at;
    if (!split_address(address, at.host, at.port)) continue;
    if (at.host.empty()) at.host = conn.endpoint().host;  // a node unsure of its own address
    Endpoint e = endpoint_at(conn.endpoint(), at);
    bool seen = std::any_of(out.begin(), out.end(), [&](const Endpoint& o) {
      return o.host == e.host && o.port == e.port;
    });
    if (!seen) out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const Endpoint& a, const Endpoint& b) {
    return std::tie(a.host, a.port) < std::tie(b.host, b.port);
  });
  return out;
}

}  // namespace rcoord::cluster
