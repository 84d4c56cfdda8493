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
  std::string server;       ///< flavour and version: "Redis 7.0.15", "Valkey 8.0.1"
};

/// The `field:value` lines of an INFO (or CLUSTER INFO) reply; `# Section` lines skipped.
using InfoFields = std::map<std::string, std::string, std::less<>>;
InfoFields parse_info(std::string_view text);
/// The value of `field`, or "" when the reply has none.
std::string info_value(const InfoFields& fields, std::string_view field);

/// The server's version in an INFO server reply: valkey_version for Valkey (whose
/// redis_version is the Redis version it is compatible with), else redis_version.
std::string version_in(const InfoFields& info);
/// The server's mode in an INFO server reply (standalone | cluster | sentinel): redis_mode, or
/// Valkey's server_mode (Valkey names it redis_mode only with extended-redis-compatibility).
std::string mode_in(const InfoFields& info);
/// The server's flavour and version in an INFO server reply: "Valkey 8.0.1" when it says
/// `server_name:valkey` (or has a valkey_version), else "Redis 7.0.15"; "" without a version.
std::string server_in(const InfoFields& info);

/// Connects, times one PING, and reads INFO server; through Sentinel, also pings each
/// sentinel. Throws Error(kConnection).
Ping ping(Connection& conn);

/// Pings every Redlock node (each with its own connection and `timeout`). Throws
/// Error(kConnection) only when none answers.
Ping ping_nodes(const std::vector<Endpoint>& endpoints, Millis timeout);

}  // namespace rcoord::server
