#include "url.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "errors.hpp"

namespace rcoord {
namespace {

using Spans = std::vector<std::pair<std::size_t, std::size_t>>;

Spans guessed_secret_spans(std::string_view url);
Spans in_order(Spans spans);
std::string masked(std::string_view url, const Spans& spans);

// A URL being refused does not parse: its message masks it by the guess, not by parsing.
[[noreturn]] void bad_url(std::string_view url, std::string_view why) {
  std::string shown = masked(url, in_order(guessed_secret_spans(url)));
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

// The parts of a URL as parse_url reads them. The userinfo is the text before the '@' that
// ends it: the first '@' of a unix:// URL (before its absolute path), the last one before the
// path of a redis:// or rediss:// URL.
struct UrlParts {
  std::string_view scheme;                   ///< empty: no "://"
  std::size_t rest_at = 0;                   ///< where what follows "://" starts in the URL
  std::string_view rest;                     ///< from there to the query, userinfo included
  std::optional<std::size_t> userinfo_size;  ///< nullopt: none
  std::optional<std::string_view> query;     ///< after the first '?'
};

UrlParts split_url(std::string_view url) {
  UrlParts parts;
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return parts;
  parts.scheme = url.substr(0, scheme_end);
  parts.rest_at = scheme_end + 3;
  parts.rest = url.substr(parts.rest_at);
  auto query_start = parts.rest.find('?');
  if (query_start != std::string_view::npos) parts.query = parts.rest.substr(query_start + 1);
  parts.rest = parts.rest.substr(0, query_start);
  std::size_t at = std::string_view::npos;
  if (parts.scheme == "unix") {
    // unix:///path.sock or unix://[user:pass@]/path.sock
    at = parts.rest.find('@');
    if (at != std::string_view::npos && parts.rest.find('/') < at) at = std::string_view::npos;
  } else {
    at = parts.rest.substr(0, parts.rest.find('/')).rfind('@');
  }
  if (at != std::string_view::npos) parts.userinfo_size = at;
  return parts;
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
  bool bracketed = hostport.front() == '[';
  if (bracketed) {
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
  // A ':' left in a host that is not in brackets is a second port (`host:1:2`), or an IPv6
  // address that needs brackets: looked up as a name it would only fail later, as a
  // connection error. A control byte (a NUL from %00 ends the name early) is never a host.
  if (!bracketed && ep.host.find(':') != std::string::npos) {
    bad_url(url, "a ':' in the host (one port only; an IPv6 address goes in brackets)");
  }
  if (!plausible_host(ep.host)) bad_url(url, "bad host");
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
      // Only a word is shown: a mistyped password (`u:pa?ss@host`) can end up here.
      bool word = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
      });
      bad_url(url,
              word ? fmt::format("unknown parameter '{}'", key) : std::string("unknown parameter"));
    }
  }
}

}  // namespace

std::string Endpoint::describe() const {
  if (!socket_path.empty()) return socket_path;
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

namespace {

// The spans of `url` that hold its password, as parse_url reads it: the password of its
// userinfo (the whole of a bare word, unless `?password=` makes it the user; a user name that
// is also the password goes with it), and every `password=` parameter of its query. nullopt
// when the URL does not parse: then any part of it may be a password.
std::optional<Spans> parsed_secret_spans(std::string_view url) {
  Endpoint ep;
  try {
    ep = parse_url(url);
  } catch (const Error&) {
    return std::nullopt;
  }
  UrlParts parts = split_url(url);
  Spans spans;
  // An empty password hides nothing (and is no password on the command line to warn about).
  if (parts.userinfo_size && !ep.password.value_or("").empty()) {
    std::string_view info = parts.rest.substr(0, *parts.userinfo_size);
    std::size_t end = parts.rest_at + info.size();
    auto colon = info.find(':');
    const std::string& password = ep.password.value_or("");
    if (colon != std::string_view::npos) {
      bool user_shown = ep.user != password;
      spans.emplace_back(parts.rest_at + (user_shown ? colon + 1 : 0), end);
    } else if (ep.user != percent_decode(url, info) || ep.user == password) {
      spans.emplace_back(parts.rest_at, end);  // a bare word, not made the user
    }
  }
  if (parts.query) {
    std::size_t from = static_cast<std::size_t>(parts.query->data() - url.data());
    while (from <= url.size()) {
      std::size_t end = std::min(url.find('&', from), url.size());
      if (url.substr(from, end - from).substr(0, 9) == "password=") {
        spans.emplace_back(from + 9, end);
      }
      from = end + 1;
    }
  }
  return spans;
}

// For a URL that does not parse (what error messages show): every `password=` parameter, and
// the userinfo, everything before the last '@' (outside those parameters) after the scheme.
// Only when it is plainly `user:password` is the user name kept; in a mistyped URL
// (`redis//:pw@host`, a '/' or '?' inside) any of it may be the password.
Spans guessed_secret_spans(std::string_view url) {
  Spans spans;
  for (auto at = url.find("password="); at != std::string_view::npos;
       at = url.find("password=", at + 1)) {
    if (at > 0 && url[at - 1] != '?' && url[at - 1] != '&') continue;
    std::size_t from = at + 9;
    spans.emplace_back(from, std::min(url.find('&', from), url.size()));
  }
  auto in_span = [&](std::size_t i) {
    return std::any_of(spans.begin(), spans.end(),
                       [i](const auto& sp) { return i >= sp.first && i < sp.second; });
  };
  std::size_t at = url.size();
  while (at > 0) {
    at = url.rfind('@', at - 1);
    if (at == std::string_view::npos || !in_span(at)) break;
  }
  if (at != std::string_view::npos && at < url.size()) {
    auto scheme_end = url.substr(0, at).find("://");
    std::size_t start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
    std::string_view info = url.substr(start, at - start);
    auto colon = info.find(':');
    bool plain = scheme_end != std::string_view::npos && colon != std::string_view::npos &&
                 info.find_first_of("/?#&") == std::string_view::npos;
    spans.emplace_back(plain ? start + colon + 1 : start, at);
  }
  return spans;
}

// `spans` sorted, overlapping ones merged.
Spans in_order(Spans spans) {
  std::sort(spans.begin(), spans.end());
  Spans merged;
  for (const auto& sp : spans) {
    if (!merged.empty() && sp.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, sp.second);
    } else {
      merged.push_back(sp);
    }
  }
  return merged;
}

// `url` with `spans` (in order, not overlapping) replaced by stars.
std::string masked(std::string_view url, const Spans& spans) {
  std::string out;
  std::size_t done = 0;
  for (const auto& [from, to] : spans) {
    out += url.substr(done, from - done);
    out += "****";
    done = to;
  }
  out += url.substr(done);
  return out;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> secret_spans(std::string_view url) {
  auto parsed = parsed_secret_spans(url);
  return in_order(parsed ? std::move(*parsed) : guessed_secret_spans(url));
}

std::string mask_url(std::string_view url) { return masked(url, secret_spans(url)); }

std::string mask_urls_in(std::string_view text) {
  auto scheme_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
  };
  std::string out;
  std::size_t done = 0;
  for (auto sep = text.find("://"); sep != std::string_view::npos; sep = text.find("://", done)) {
    // The URL around "://": back over its scheme, forward to a space or a quote.
    std::size_t begin = sep;
    while (begin > done && scheme_char(text[begin - 1])) --begin;
    std::size_t end = std::min(text.find_first_of(" \t\n'\"", sep), text.size());
    out += text.substr(done, begin - done);
    out += mask_url(text.substr(begin, end - begin));
    done = end;
  }
  out += text.substr(done);
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
    std::string shown = mask_url(text).substr(0, 200);  // masked first: the '@' may come late
    throw Error(kUsage, fmt::format("bad {} '{}'", what, shown),
                "use HOST:PORT, e.g. 127.0.0.1:26379 or [::1]:26379");
  }
  return {ep.host, ep.port};
}

bool plausible_host(std::string_view host) {
  return !host.empty() && std::none_of(host.begin(), host.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return std::isspace(byte) != 0 || byte < 0x20 || byte == 0x7f || c == '/' || c == '@';
  });
}

Endpoint parse_url(std::string_view url) {
  Endpoint ep;
  UrlParts parts = split_url(url);
  if (parts.rest_at == 0) bad_url(url, "no scheme");
  if (url.size() > 4096) bad_url(url, "longer than 4096 bytes");
  std::string_view scheme = parts.scheme;
  bool unix_socket = scheme == "unix";
  if (scheme == "rediss") {
    ep.tls = true;
  } else if (scheme != "redis" && !unix_socket) {
    // Only a word is shown: text before a misplaced "://" may hold a password.
    bool word = std::all_of(scheme.begin(), scheme.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
    });
    bad_url(url, word ? fmt::format("unknown scheme '{}'", scheme) : std::string("unknown scheme"));
  }
  std::string_view rest = parts.rest;
  std::string_view query = parts.query.value_or(std::string_view{});
  if (parts.userinfo_size) {
    parse_userinfo(url, rest.substr(0, *parts.userinfo_size), ep);
    rest = rest.substr(*parts.userinfo_size + 1);
  }
  if (unix_socket) {
    if (rest.empty() || rest.front() != '/') bad_url(url, "a unix socket path must be absolute");
    ep.socket_path = percent_decode(url, rest);
    if (ep.socket_path.find('\0') != std::string::npos) bad_url(url, "a NUL byte in the path");
    parse_query(url, query, ep);
    return ep;
  }

  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path =
      slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
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
