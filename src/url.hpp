#pragma once
/// Parsing of `redis://`, `rediss://` and `unix://` URLs into connection settings.

#include <optional>
#include <string>
#include <string_view>

namespace rcoord {

/// Where and how to reach one Redis server. Plain data; the Connection consumes it.
struct Endpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string socket_path;  ///< non-empty: a Unix socket; host and port are ignored
  std::string user;         ///< ACL user; empty: the default user
  std::optional<std::string> password;
  int db = 0;
  bool tls = false;

  /// `host:port` or the socket path, for messages. Never contains the password.
  std::string describe() const;
};

/// Parses a URL. Throws Error(kUsage) naming the URL (with any password masked) on bad input.
Endpoint parse_url(std::string_view url);

/// `redis://user:****@host:port/db`: the URL with its password hidden, for messages.
std::string mask_url(std::string_view url);

}  // namespace rcoord
