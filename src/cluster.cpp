#include "cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <sstream>
#include <thread>
#include <tuple>

#include "errors.hpp"

namespace rcoord::cluster {
namespace {

constexpr const char* kCheckHint =
    "check the cluster with 'rcoord doctor' or 'redis-cli --cluster check'";

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

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "host:port" (host may be empty, or an IPv6 address with colons) -> host and port.
bool split_address(std::string_view address, std::string& host, int& port) {
  auto colon = address.rfind(':');
  if (colon == std::string_view::npos) return false;
  host = std::string(address.substr(0, colon));
  std::string digits(address.substr(colon + 1));
  if (digits.empty() || digits.size() > 5 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  port = std::stoi(digits);
  return port > 0 && port < 65536;
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

Redirect parse_redirect(const redisReply* r) {
  Redirect out;
  if (r == nullptr || r->type != REDIS_REPLY_ERROR) return out;
  std::string_view msg(r->str, r->len);
  if (starts_with(msg, "TRYAGAIN")) {
    out.kind = Redirect::Kind::kTryAgain;
    out.text = std::string(msg);
    return out;
  }
  bool moved = starts_with(msg, "MOVED ");
  if (!moved && !starts_with(msg, "ASK ")) return out;
  // MOVED <slot> <host>:<port>
  std::istringstream words{std::string(msg)};
  std::string verb;
  std::string slot;
  std::string address;
  words >> verb >> slot >> address;
  if (slot.empty() || address.empty() ||
      !std::all_of(slot.begin(), slot.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      slot.size() > 5 || !split_address(address, out.host, out.port)) {
    return out;  // not a redirect we understand: the caller reports the error as it is
  }
  out.slot = std::stoi(slot);
  out.kind = moved ? Redirect::Kind::kMoved : Redirect::Kind::kAsk;
  out.text = std::string(msg);
  return out;
}

bool is_redirect(const redisReply* r) {
  auto kind = parse_redirect(r).kind;
  return kind == Redirect::Kind::kMoved || kind == Redirect::Kind::kAsk;
}

Redirect pipeline_redirect(const std::vector<Reply>& replies) {
  if (replies.empty()) return {};
  Redirect first = parse_redirect(replies.front().get());
  if (first.kind == Redirect::Kind::kNone) return first;
  for (std::size_t i = 1; i < replies.size(); ++i) {
    Redirect r = parse_redirect(replies[i].get());
    if (r.kind != first.kind || r.host != first.host || r.port != first.port) return {};
  }
  return first;
}

Endpoint endpoint_at(const Endpoint& base, const Redirect& to) {
  Endpoint out = base;
  if (to.host == "?") {
    throw Error(kServer, fmt::format("cluster error: {} names no address for the node", to.text),
                "set cluster-preferred-endpoint-type to ip (or give nodes hostnames)");
  }
  if (!to.host.empty()) {
    out.host = to.host;
  } else if (!base.socket_path.empty()) {
    // A node unsure of its own address, reached through a Unix socket: it is on this machine.
    out.host = "127.0.0.1";
  }
  out.port = to.port;
  out.socket_path.clear();  // a redirect always names a TCP address
  return out;
}

void Budget::hop(const Redirect& r) {
  bool ask = r.kind == Redirect::Kind::kAsk;
  if (ask ? ++asks_ > kMaxHops + kMaxRetries : ++hops_ > kMaxHops) {
    throw Error(kServer,
                fmt::format("cluster error: still redirected after {} hops (last: {})",
                            ask ? asks_ - 1 : kMaxHops, r.text),
                kCheckHint);
  }
}

void Budget::pause(const Redirect& r) {
  if (++retries_ > kMaxRetries) {
    throw Error(kServer,
                fmt::format("cluster error: a slot stayed in migration ({}) through {} retries",
                            r.text, kMaxRetries),
                "run the command again once the resharding is over");
  }
  // 5, 10, 20 ... ms, at most 200 ms: about 3 s in all before giving up.
  auto ms = std::min(200, 5 << std::min(retries_ - 1, 6));
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

std::optional<std::vector<Endpoint>> masters(Connection& conn) {
  Reply r = conn.command_raw({"CLUSTER", "NODES"});
  if (r->type == REDIS_REPLY_ERROR) {
    std::string_view msg(r->str, r->len);
    // Standalone ("cluster support disabled"), or a user without the right to ask.
    if (msg.find("cluster support disabled") != std::string_view::npos ||
        starts_with(msg, "NOPERM") || starts_with(msg, "ERR unknown command")) {
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
