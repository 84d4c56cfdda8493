#pragma once
/// Parsing of `redis://`, `rediss://` and `unix://` URLs into connection settings.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rcoord {

/// TLS settings of a `rediss://` endpoint. The server's certificate and host name are
/// verified unless `insecure`; without `ca_file` the system's trust store is used.
struct TlsSettings {
  std::string ca_file;
  std::string cert_file;  ///< client certificate (mutual TLS), with key_file
  std::string key_file;
  std::string sni;  ///< server name to send and verify; empty: the host
  bool insecure = false;
};

/// A Sentinel deployment that names the master: the Connection asks the sentinels for the
/// master's address each time it connects, so a failover is followed on reconnect.
struct SentinelSettings {
  std::vector<std::pair<std::string, int>> sentinels;  ///< host, port
  std::string master;                                  ///< the monitored master's name
};

/// Where and how to reach one Redis server. Plain data; the Connection consumes it.
struct Endpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string socket_path;  ///< non-empty: a Unix socket; host and port are ignored
  std::string user;         ///< ACL user; empty: the default user
  std::optional<std::string> password;
  /// The URL's credentials were one bare word (`redis://word@host`), kept in `password`: the
  /// default user's password, as in redis-cli, unless a password also comes from elsewhere
  /// (--password-file, -a, $RCOORD_PASSWORD, $REDISCLI_AUTH): then the word names the ACL
  /// user (SPEC §1). The caller, which knows the other sources, decides (take_bare_user()).
  bool bare_userinfo = false;
  int db = 0;
  bool tls = false;
  TlsSettings tls_settings;
  SentinelSettings sentinel;  ///< non-empty sentinels: host and port are found through them
  /// The name each connection gives itself (CLIENT SETNAME, in the same write as its first
  /// command); empty: none. Not passed on to the sentinels.
  std::string client_name;

  /// `host:port` or the socket path, for messages. Never contains the password.
  std::string describe() const;
};

/// One sentinel of `data` (a master found through Sentinel): the sentinel's address with the
/// master's TLS settings; a sentinel speaks plain RESP and has no data user, password or db.
Endpoint sentinel_endpoint(const Endpoint& data, const std::pair<std::string, int>& address);

/// The rule of a bare `word@` in a URL when `password` came from outside the URL: the word
/// becomes the ACL user (unless a user is set already, e.g. by --user: then the word is
/// dropped) and `password` the password. Without an outside password nothing changes.
void take_bare_user(Endpoint& ep, const std::optional<std::string>& password);

/// Whether `host` can name a server: not empty, and no space, control byte, '/' or '@' (a
/// newline would forge a line of a message, a NUL end the name early). What a URL's host is
/// checked for, and -h too; a ':' is the caller's to judge (an IPv6 address has them).
bool plausible_host(std::string_view host);

/// Parses a URL. Throws Error(kUsage) naming the URL (with any password masked) on bad input.
Endpoint parse_url(std::string_view url);

/// `redis://user:****@host:port/db`: the URL with its password hidden, for messages. A
/// mistyped URL is masked too: whatever comes before its last '@' may be a password
/// (`redis//:****@host` becomes `****@host`), and so is every `password=` value.
std::string mask_url(std::string_view url);

/// The byte ranges [first, second) of `url` that mask_url hides, in order, not overlapping.
std::vector<std::pair<std::size_t, std::size_t>> secret_spans(std::string_view url);

/// `text` (a message) with every URL in it (`scheme://...`, up to a space or a quote)
/// masked as mask_url does.
std::string mask_urls_in(std::string_view text);

/// Parses `HOST:PORT` (or `[IPv6]:PORT`) as given to --sentinel. Throws Error(kUsage).
std::pair<std::string, int> parse_address(std::string_view text, std::string_view what);

}  // namespace rcoord
