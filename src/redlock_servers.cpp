#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <map>
#include <set>

#include "errors.hpp"
#include "redlock.hpp"
#include "redlock_nodes.hpp"
#include "server.hpp"

// A Redlock's nodes must be distinct servers, else one vote counts twice: checked by
// address before anything is sent, then by run_id once they answer.

namespace rcoord::redlock {
namespace {

// Where an endpoint leads, as comparable strings: `unix:<device>:<inode>` for a Unix socket
// (its path when it cannot be stat'ed), else `<address> <port>` for each address its host
// resolves to, an IPv4-mapped IPv6 address written as the IPv4 one. Empty when the host does
// not resolve.
std::set<std::string> addresses_of(const Endpoint& ep) {
  std::set<std::string> out;
  if (!ep.socket_path.empty()) {
    struct stat st {};
    if (::stat(ep.socket_path.c_str(), &st) == 0) {
      out.insert(fmt::format("unix:{}:{}", st.st_dev, st.st_ino));
    } else {
      out.insert("unix:" + ep.socket_path);
    }
    return out;
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  // getaddrinfo also reads the short IPv4 forms (`127.1`) as inet_aton does.
  if (getaddrinfo(ep.host.c_str(), nullptr, &hints, &found) != 0) return out;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    } else if (a->ai_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
      if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
        inet_ntop(AF_INET, &v6->sin6_addr.s6_addr[12], text, sizeof text);
      } else {
        inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
      }
    } else {
      continue;
    }
    out.insert(fmt::format("{} {}", text, ep.port));
  }
  freeaddrinfo(found);
  return out;
}

// `a.b.c.d 6379` as `a.b.c.d:6379`, `::1 6379` as `[::1]:6379`; `unix:...` as it is.
std::string address_text(const std::string& address) {
  auto space = address.find(' ');
  if (space == std::string::npos) return address;
  std::string host = address.substr(0, space);
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return host + ":" + address.substr(space + 1);
}

[[noreturn]] void one_server_twice(const Endpoint& a, const Endpoint& b, const std::string& how) {
  throw Error(kUsage,
              fmt::format("--url {} and --url {} reach one server ({}): its vote would count "
                          "twice toward the Redlock's quorum",
                          a.describe(), b.describe(), how),
              "give each independent master once");
}

}  // namespace

std::optional<SameServer> same_address(const std::vector<Endpoint>& endpoints) {
  std::vector<std::set<std::string>> addresses;
  addresses.reserve(endpoints.size());
  for (const auto& ep : endpoints) addresses.push_back(addresses_of(ep));
  for (std::size_t j = 1; j < endpoints.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      for (const auto& address : addresses[j]) {
        if (addresses[i].contains(address)) return SameServer{i, j, address_text(address)};
      }
    }
  }
  return std::nullopt;
}

Redlock::Redlock(const std::vector<Endpoint>& endpoints, Millis per_node, Keys keys)
    : keys_(std::move(keys)) {
  if (endpoints.size() < 3) {
    throw Error(kUsage, "a Redlock needs 3 or more Redis nodes", "give three or more --url");
  }
  if (auto twice = same_address(endpoints)) {
    one_server_twice(endpoints[twice->first], endpoints[twice->second], twice->address);
  }
  conns_.reserve(endpoints.size());
  for (const auto& ep : endpoints) conns_.emplace_back(ep, per_node);
}

void Redlock::check_servers() {
  if (servers_checked_) return;
  servers_checked_ = true;
  auto ids = on_all(conns_, [](std::size_t, Connection& c) {
    Reply r = c.command_raw({"INFO", "server"});
    // A server that refuses INFO (an ACL, a renamed command) is not checked.
    if (r->type != REDIS_REPLY_STRING) return std::string();
    return server::info_value(server::parse_info(reply_string(r.get())), "run_id");
  });
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!ids[i].answered() || ids[i].value->empty()) continue;
    auto [it, fresh] = first.emplace(*ids[i].value, i);
    if (!fresh) {
      one_server_twice(conns_[it->second].endpoint(), conns_[i].endpoint(),
                       "run_id " + *ids[i].value);
    }
  }
}

}  // namespace rcoord::redlock
