#pragma once
/// Facts about the server (or servers) rcoord talks to.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"

namespace rcoord::server {

/// One server behind the logical one: a cluster master, a sentinel, a Redlock node.
struct Node {
  std::string address;      ///< host:port or socket path
  std::string role;         ///< master | sentinel | node
  std::int64_t rtt_us = 0;  ///< one PING round trip; -1 when it did not answer
  std::string error;        ///< why it did not answer
};

struct Ping {
  std::string url;          ///< the endpoint, never with a password
  std::string version;      ///< redis_version (or valkey_version)
  std::string mode;         ///< standalone | sentinel | cluster | redlock
  std::int64_t rtt_us = 0;  ///< one PING round trip to the server commands go to
  std::vector<Node> nodes;  ///< every server of a sentinel, cluster or Redlock setup
};

/// The `field:value` lines of an INFO (or CLUSTER INFO) reply; `# Section` lines skipped.
using InfoFields = std::map<std::string, std::string, std::less<>>;
InfoFields parse_info(std::string_view text);
/// The value of `field`, or "" when the reply has none.
std::string info_value(const InfoFields& fields, std::string_view field);

/// Connects, times one PING, and reads INFO server; through Sentinel, also pings each
/// sentinel. Throws Error(kConnection).
Ping ping(Connection& conn);

/// Pings every Redlock node (each with its own connection and `timeout`). Throws
/// Error(kConnection) only when none answers.
Ping ping_nodes(const std::vector<Endpoint>& endpoints, Millis timeout);

}  // namespace rcoord::server
