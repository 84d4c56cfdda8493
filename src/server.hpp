#pragma once
/// Facts about the server rcoord talks to.

#include <cstdint>
#include <string>

#include "connection.hpp"

namespace rcoord::server {

struct Ping {
  std::string url;          ///< the endpoint, never with a password
  std::string version;      ///< redis_version (or valkey_version)
  std::string mode;         ///< standalone | cluster | sentinel
  std::int64_t rtt_us = 0;  ///< one PING round trip, in microseconds
};

/// Connects, times one PING, and reads INFO server. Throws Error(kConnection).
Ping ping(Connection& conn);

}  // namespace rcoord::server
