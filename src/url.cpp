#include "url.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cctype>

#include "errors.hpp"

namespace rcoord {
namespace {

[[noreturn]] void bad_url(std::string_view url, std::string_view why) {
  std::string shown = mask_url(url);
  if (shown.size() > 200) shown = shown.substr(0, 200) + "...";
  throw Error(kUsage, fmt::format("bad URL '{}': {}", shown, why),
              "use redis://[user[:password]@]host[:port][/db], rediss://... or "
              "unix:///path.sock[?db=N]");
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view url, std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) bad_url(url, "truncated %-escape");
    int hi = hex_value(text[i + 1]);
    int lo = hex_value(text[i + 2]);
    if (hi < 0 || lo < 0) bad_url(url, "bad %-escape");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

int parse_number(std::string_view url, std::string_view text, int max, std::string_view what) {
  if (text.empty() || text.size() > 9) bad_url(url, fmt::format("bad {}", what));
  int value = 0;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) bad_url(url, fmt::format("bad {}", what));
    value = value * 10 + (c - '0');
  }
  if (value > max) bad_url(url, fmt::format("{} out of range", what));
  return value;
}

void parse_userinfo(std::string_view url, std::string_view info, Endpoint& ep) {
  auto colon = info.find(':');
  if (colon == std::string_view::npos) {
    // redis-cli reads `redis://secret@host` as a password for the default user; with a
    // password given elsewhere it is the user's name (take_bare_user).
    ep.password = percent_decode(url, info);
    ep.bare_userinfo = true;
    return;
  }
  ep.user = percent_decode(url, info.substr(0, colon));
  ep.password = percent_decode(url, info.substr(colon + 1));
}

void parse_host_port(std::string_view url, std::string_view hostport, Endpoint& ep) {
  if (hostport.empty()) return;  // redis:// alone: the defaults
  std::string_view port_text;
  if (hostport.front() == '[') {
    auto close = hostport.find(']');
    if (close == std::string_view::npos) bad_url(url, "unterminated IPv6 address");
    ep.host = std::string(hostport.substr(1, close - 1));
    // Only an IPv6 literal goes in brackets; anything else would be looked up as a name.
    in6_addr addr{};
    if (inet_pton(AF_INET6, ep.host.c_str(), &addr) != 1) bad_url(url, "bad IPv6 address");
    std::string_view rest = hostport.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') bad_url(url, "junk after IPv6 address");
      port_text = rest.substr(1);
      ep.port = parse_number(url, port_text, 65535, "port");
    }
  } else {
    auto colon = hostport.rfind(':');
    if (colon != std::string_view::npos) {
      port_text = hostport.substr(colon + 1);
      ep.port = parse_number(url, port_text, 65535, "port");
      hostport = hostport.substr(0, colon);
    }
    if (!hostport.empty()) ep.host = percent_decode(url, hostport);
  }
  if (ep.host.empty()) bad_url(url, "empty host");
  if (ep.port == 0) bad_url(url, "port 0");
  for (char c : ep.host) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0 || c == '/' || c == '@') {
      bad_url(url, "bad host");
    }
  }
}

void parse_query(std::string_view url, std::string_view query, Endpoint& ep) {
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    auto eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    if (key == "db") {
      ep.db = parse_number(url, value, 1'000'000, "db");
    } else if (key == "password") {
      // `redis://alice@host?password=...`: with the password here, the bare word is the user.
      take_bare_user(ep, percent_decode(url, value));
      ep.password = percent_decode(url, value);
    } else if (key == "user") {
      ep.user = percent_decode(url, value);
      ep.bare_userinfo = false;  // `redis://secret@host?user=alice`: the word is a password
    } else {
      bad_url(url, fmt::format("unknown parameter '{}'", key));
    }
  }
}

}  // namespace

std::string Endpoint::describe() const {
  if (!socket_path.empty()) return socket_path;
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

std::string mask_url(std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  std::size_t start = scheme_end + 3;
  std::string_view rest = url.substr(start);
  auto query = rest.find('?');
  std::string_view head = rest.substr(0, query);
  // Find the '@' that ends the credentials exactly as parse_url does, so that whatever it
  // reads as the password is what gets hidden.
  std::size_t at = std::string_view::npos;
  if (url.substr(0, scheme_end) == "unix") {
    at = head.find('@');
    if (at != std::string_view::npos && head.find('/') < at) at = std::string_view::npos;
  } else {
    at = head.substr(0, head.find('/')).rfind('@');
  }
  std::string out(url.substr(0, start));
  if (at == std::string_view::npos) {
    out += head;
  } else {
    std::string_view info = head.substr(0, at);
    auto colon = info.find(':');
    out += colon == std::string_view::npos ? std::string("****")
                                           : std::string(info.substr(0, colon)) + ":****";
    out += head.substr(at);
  }
  if (query == std::string_view::npos) return out;
  // ?password=... is a password too.
  std::string_view params = rest.substr(query + 1);
  out += '?';
  for (bool first = true; !params.empty() || first; first = false) {
    auto amp = params.find('&');
    std::string_view pair = params.substr(0, amp);
    params = amp == std::string_view::npos ? std::string_view{} : params.substr(amp + 1);
    if (!first) out += '&';
    out += pair.substr(0, 9) == "password=" ? std::string("password=****") : std::string(pair);
    if (amp == std::string_view::npos) break;
  }
  return out;
}

std::pair<std::string, int> parse_address(std::string_view text, std::string_view what) {
  Endpoint ep;
  ep.port = 0;
  try {
    parse_host_port(text, text, ep);
  } catch (const Error&) {
    ep.port = 0;
  }
  if (ep.port == 0 || text.empty() || text.front() == ':') {
    std::string shown(text.substr(0, 200));
    throw Error(kUsage, fmt::format("bad {} '{}'", what, shown),
                "use HOST:PORT, e.g. 127.0.0.1:26379 or [::1]:26379");
  }
  return {ep.host, ep.port};
}

Endpoint parse_url(std::string_view url) {
  Endpoint ep;
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) bad_url(url, "no scheme");
  std::string_view scheme = url.substr(0, scheme_end);
  std::string_view rest = url.substr(scheme_end + 3);
  if (url.size() > 4096) bad_url(url, "longer than 4096 bytes");

  auto query_start = rest.find('?');
  std::string_view query =
      query_start == std::string_view::npos ? std::string_view{} : rest.substr(query_start + 1);
  rest = rest.substr(0, query_start);

  if (scheme == "unix") {
    // unix:///path.sock or unix://[user:pass@]/path.sock
    auto at = rest.find('@');
    if (at != std::string_view::npos && rest.find('/') > at) {
      parse_userinfo(url, rest.substr(0, at), ep);
      rest = rest.substr(at + 1);
    }
    if (rest.empty() || rest.front() != '/') bad_url(url, "a unix socket path must be absolute");
    ep.socket_path = percent_decode(url, rest);
    parse_query(url, query, ep);
    return ep;
  }
  if (scheme == "rediss") {
    ep.tls = true;
  } else if (scheme != "redis") {
    bad_url(url, fmt::format("unknown scheme '{}'", scheme));
  }

  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path =
      slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  auto at = authority.rfind('@');
  if (at != std::string_view::npos) {
    parse_userinfo(url, authority.substr(0, at), ep);
    authority = authority.substr(at + 1);
  }
  parse_host_port(url, authority, ep);
  if (!path.empty()) ep.db = parse_number(url, path, 1'000'000, "db");
  parse_query(url, query, ep);
  return ep;
}

void take_bare_user(Endpoint& ep, const std::optional<std::string>& password) {
  if (!ep.bare_userinfo || !password) return;
  if (ep.user.empty()) ep.user = ep.password.value_or("");
  ep.password = password;
  ep.bare_userinfo = false;
}

Endpoint sentinel_endpoint(const Endpoint& data, const std::pair<std::string, int>& address) {
  Endpoint at;
  at.host = address.first;
  at.port = address.second;
  at.tls = data.tls;
  at.tls_settings = data.tls_settings;
  return at;
}

}  // namespace rcoord
