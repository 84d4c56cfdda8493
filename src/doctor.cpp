#include "doctor.hpp"

#include <fmt/format.h>

#include <string_view>

#include "cluster.hpp"
#include "errors.hpp"
#include "server.hpp"
#include "waiting.hpp"

namespace rcoord::doctor {
namespace {

using server::info_value;
using server::InfoFields;
using server::parse_info;

// The `field:value` lines of an INFO section.
InfoFields info_fields(Connection& conn, std::string_view section) {
  return parse_info(reply_string(conn.command({"INFO", std::string(section)}).get()));
}

// CONFIG GET name -> value; nullopt-like "" with `refused` set when CONFIG is not allowed.
std::string config_get(Connection& conn, const std::string& name, std::string& refused) {
  try {
    Reply r = conn.command({"CONFIG", "GET", name});
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 2) return reply_string(r->element[1]);
    return {};
  } catch (const Error& e) {
    if (e.code() != kServer) throw;
    refused = e.what();
    return {};
  }
}

Finding check_eviction(Connection& conn) {
  std::string refused;
  std::string policy = config_get(conn, "maxmemory-policy", refused);
  std::string maxmemory = config_get(conn, "maxmemory", refused);
  if (!refused.empty()) {
    return {"eviction", false, fmt::format("cannot read the eviction policy: {}", refused),
            "allow CONFIG GET for this user, or check maxmemory-policy by hand"};
  }
  if (policy == "noeviction") {
    return {"eviction", true, "maxmemory-policy is noeviction: keys are never evicted", ""};
  }
  if (maxmemory == "0") {
    return {"eviction", true,
            fmt::format("maxmemory-policy is {}, but maxmemory is 0 (no limit): nothing is "
                        "evicted",
                        policy),
            ""};
  }
  return {"eviction", false,
          fmt::format("maxmemory-policy is {} with maxmemory {}: under memory pressure Redis "
                      "evicts keys, and a lock, permit or queued message can vanish",
                      policy, maxmemory),
          "CONFIG SET maxmemory-policy noeviction (and put it in redis.conf)"};
}

Finding check_persistence(Connection& conn) {
  std::string refused;
  std::string aof = config_get(conn, "appendonly", refused);
  std::string save = config_get(conn, "save", refused);
  if (!refused.empty()) {
    return {"persistence", false, fmt::format("cannot read the persistence settings: {}", refused),
            "allow CONFIG GET for this user, or check appendonly and save by hand"};
  }
  if (aof == "yes") return {"persistence", true, "append-only file is on", ""};
  if (save.empty()) {
    return {"persistence", false,
            "no persistence (appendonly no, save \"\"): a restart forgets every lock, permit, "
            "queue and fence counter",
            "CONFIG SET appendonly yes (and put it in redis.conf)"};
  }
  return {"persistence", false,
          fmt::format("snapshots only (save \"{}\"): a restart loses what changed since the last "
                      "snapshot, and fences can go back",
                      save),
          "CONFIG SET appendonly yes (and put it in redis.conf)"};
}

Finding check_replication(Connection& conn) {
  auto fields = info_fields(conn, "replication");
  std::string role = info_value(fields, "role");
  if (role == "slave") {
    return {"replication", false,
            fmt::format("this server is a replica of {}:{}: writes are refused here",
                        info_value(fields, "master_host"), info_value(fields, "master_port")),
            "point --url at the master (or use --sentinel)"};
  }
  auto replicas = std::strtol(info_value(fields, "connected_slaves").c_str(), nullptr, 10);
  if (replicas == 0) {
    return {"replication", true,
            "no replicas: nothing is lost to a failover, but the server is a single point of "
            "failure",
            ""};
  }
  std::string lagging;
  for (long i = 0; i < replicas; ++i) {
    // slaveN:ip=...,port=...,state=online,offset=...,lag=0
    std::string line = info_value(fields, fmt::format("slave{}", i));
    auto at = line.find("lag=");
    long lag = at == std::string::npos ? -1 : std::strtol(line.c_str() + at + 4, nullptr, 10);
    bool online = line.find("state=online") != std::string::npos;
    if (!online || lag > 1) lagging += fmt::format(" [{}]", line);
  }
  if (!lagging.empty()) {
    return {"replication", false,
            fmt::format("replicas behind by more than 1 s or not online:{}; a failover now would "
                        "lose recent locks",
                        lagging),
            "check the replicas' links and load; keep --wait-replicas at auto (the default) or a "
            "number for writes that must survive a failover"};
  }
  // INFO names the good replicas only when min-replicas-to-write is set. Without it, a master
  // cut off from its replicas, or left behind by a failover it did not see, goes on granting
  // once it sees no replica connected (--wait-replicas auto then waits for none), while the
  // promoted replica grants the same locks: two holders (docs/guarantees.md).
  if (info_value(fields, "min_slaves_good_slaves").empty()) {
    return {"replication", false,
            fmt::format("{} replica(s) online, but min-replicas-to-write is 0: a master cut off "
                        "from its replicas goes on granting locks that a promoted replica "
                        "grants too",
                        replicas),
            "CONFIG SET min-replicas-to-write 1 and CONFIG SET min-replicas-max-lag 2 (and put "
            "them in redis.conf): such a master then refuses writes"};
  }
  return {"replication", true,
          fmt::format("{} replica(s) online, lag at most 1 s, min-replicas-to-write set (a "
                      "failover can still lose the last writes made with --wait-replicas 0)",
                      replicas),
          ""};
}

// Slot coverage as every master sees it: a node that lost slots (or lost touch with their
// owner) refuses the keys of those slots, even while the other masters are content.
Finding check_cluster(Connection& conn, const std::vector<Endpoint>& masters) {
  auto server_info = info_fields(conn, "server");
  std::string mode = server::mode_in(server_info);
  if (mode != "cluster") {
    return {"cluster", true, fmt::format("{} server: no slots to cover", mode), ""};
  }
  for (const auto& endpoint : masters) {
    InfoFields info;
    try {
      Connection node(endpoint, conn.timeout());
      info = parse_info(reply_string(node.command({"CLUSTER", "INFO"}).get()));
    } catch (const Error& e) {
      if (e.code() != kConnection && e.code() != kServer) throw;
      return {"cluster", false,
              fmt::format("master {} does not answer: {}", endpoint.describe(), e.what()),
              "bring the master back, or fail it over to a replica (CLUSTER FAILOVER)"};
    }
    auto value = [&](std::string_view name) { return info_value(info, name); };
    if (value("cluster_state") == "ok" && value("cluster_slots_ok") == "16384") continue;
    return {"cluster", false,
            fmt::format("master {} sees cluster_state {}, {} of 16384 slots ok (assigned {}, "
                        "failing {}): keys of the other slots are refused there",
                        endpoint.describe(), value("cluster_state"), value("cluster_slots_ok"),
                        value("cluster_slots_assigned"), value("cluster_slots_fail")),
            "assign every slot to a reachable master (redis-cli --cluster fix " +
                endpoint.describe() + ")"};
  }
  return {"cluster", true,
          fmt::format("all 16384 slots are served ({} master(s) agree)", masters.size()), ""};
}

// Which server this is, and whether rcoord can serve every verb on it: Redis 6.2 added
// commands rcoord sends (BLMOVE for queue waits, ZRANDMEMBER in signal send --one), and
// Valkey began as Redis 7.2.
Finding check_server(Connection& conn) {
  auto info = info_fields(conn, "server");
  std::string server = server::server_in(info);
  if (server.empty()) {
    return {"server", false, "INFO server names no version",
            "check that this is a Redis (6.2 or later) or Valkey server"};
  }
  std::string version = server::version_in(info);
  char* rest = nullptr;
  long major = std::strtol(version.c_str(), &rest, 10);
  long minor = *rest == '.' ? std::strtol(rest + 1, nullptr, 10) : 0;
  bool valkey = server.rfind("Valkey", 0) == 0;
  std::string mode = server::mode_in(info);
  if (!valkey && (major < 6 || (major == 6 && minor < 2))) {
    return {
        "server", false,
        fmt::format("{} ({}): rcoord needs Redis 6.2 or later, and verbs fail here", server, mode),
        "upgrade to Redis 6.2 or later, or Valkey"};
  }
  return {"server", true, fmt::format("{} ({})", server, mode), ""};
}

// The commands rcoord sends. Tried for real where harmless, so this works for users that
// may not run ACL DRYRUN.
Finding check_permissions(Connection& conn, const Keys& keys) {
  std::string probe = keys.aux("doctor", "probe", "x");
  std::vector<std::pair<std::string, Args>> tries = {
      {"EVAL", {"EVAL", "return redis.call('TIME')[1]", "0"}},
      {"EVALSHA", {"EVALSHA", "0000000000000000000000000000000000000000", "0"}},
      {"BLPOP", {"BLPOP", probe, waiting::block_seconds(Millis(1))}},
      {"PUBLISH", {"PUBLISH", probe, "doctor"}},
  };
  std::string refused;
  for (const auto& [name, args] : tries) {
    Reply r = conn.command_raw(args);
    if (r->type != REDIS_REPLY_ERROR) continue;
    std::string_view msg(r->str, r->len);
    if (msg.substr(0, 6) == "NOPERM" || msg.find("no permissions") != std::string_view::npos) {
      refused += (refused.empty() ? "" : ", ") + name;
    }
  }
  if (!refused.empty()) {
    return {"permissions", false, fmt::format("this user may not run: {}", refused),
            fmt::format("grant the rule of docs/configuration.md, ACL (keys ~{}*, channels &{}*)",
                        keys.prefix(), keys.prefix())};
  }
  return {"permissions", true, "scripts (EVAL/EVALSHA with TIME), blocking pops and PUBLISH work",
          ""};
}

}  // namespace

std::vector<Finding> examine(Connection& conn, const Keys& keys) {
  conn.ensure_connected();
  std::vector<Finding> findings;
  auto masters = cluster::masters(conn);
  if (!masters) {
    findings.push_back(check_server(conn));
    findings.push_back(check_eviction(conn));
    findings.push_back(check_persistence(conn));
    findings.push_back(check_replication(conn));
    findings.push_back(check_cluster(conn, {}));
    findings.push_back(check_permissions(conn, keys));
    return findings;
  }
  // A cluster: a lock is as safe as the master its slot lives on, so every master is checked.
  for (const auto& endpoint : *masters) {
    Connection node(endpoint, conn.timeout());
    std::string label = endpoint.describe();
    try {
      for (auto finding : {check_server(node), check_eviction(node), check_persistence(node),
                           check_replication(node), check_permissions(node, keys)}) {
        finding.detail = label + ": " + finding.detail;
        findings.push_back(std::move(finding));
      }
    } catch (const Error& e) {
      if (e.code() != kConnection) throw;
      findings.push_back({"cluster", false,
                          fmt::format("{}: cannot be reached: {}", label, e.what()),
                          "bring the master back, or fail it over to a replica"});
    }
  }
  findings.push_back(check_cluster(conn, *masters));
  return findings;
}

}  // namespace rcoord::doctor
