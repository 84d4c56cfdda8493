#pragma once
/// Redis Cluster support: key slots, the redirect replies (MOVED, ASK, TRYAGAIN) a node
/// answers for a slot it does not serve, and the list of a cluster's masters.
///
/// rcoord needs no slot map: every key of one object shares one hash tag, so a command on
/// one object goes to one node, and a Connection that is told MOVED simply moves there.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "url.hpp"

namespace rcoord::cluster {

constexpr int kSlots = 16384;

/// The slot of `key` (CRC16 of the hash tag if the key has a non-empty `{...}`, else of
/// the whole key), as CLUSTER KEYSLOT computes it.
int key_slot(std::string_view key);

struct Redirect {
  enum class Kind { kNone, kMoved, kAsk, kTryAgain };
  Kind kind = Kind::kNone;
  int slot = -1;
  std::string host;  ///< empty: the same host as the node that answered
  int port = 0;
  std::string text;  ///< the error reply, for messages
};

/// The redirect an error reply asks for; kind kNone for any other reply.
Redirect parse_redirect(const redisReply* r);

/// The redirect of a whole pipeline: kind kNone unless every reply asks for the same kind
/// of redirect (then nothing ran and the pipeline can be sent again as a whole). A pipeline
/// whose replies are only partly redirects is left to the caller, which sees the error
/// replies in place.
Redirect pipeline_redirect(const std::vector<Reply>& replies);

/// True for a MOVED or ASK error reply.
bool is_redirect(const redisReply* r);

/// `base` pointed at the node of `to`: same user, password, db and TLS settings.
Endpoint endpoint_at(const Endpoint& base, const Redirect& to);

/// Bounds the redirects of one command: at most kMaxHops MOVED/ASK hops, and a few
/// TRYAGAIN retries (a slot in migration) with a growing pause between them.
class Budget {
 public:
  static constexpr int kMaxHops = 5;
  static constexpr int kMaxRetries = 20;
  /// Counts a MOVED hop (or an ASK: as many as TRYAGAIN retries are allowed, since a slot
  /// in migration answers ASK then TRYAGAIN in turn); throws Error(kServer) "cluster
  /// error" when there were too many.
  void hop(const Redirect& r);
  /// Pauses before a TRYAGAIN retry; throws Error(kServer) when the slot stays busy.
  void pause(const Redirect& r);

 private:
  int hops_ = 0;
  int asks_ = 0;
  int retries_ = 0;
};

/// The masters of the cluster `conn` is connected to (from CLUSTER NODES, failed ones
/// included, so that a check can report them), each with the settings of `conn`; nullopt
/// when the server is not in cluster mode (or this user may not run CLUSTER NODES).
std::optional<std::vector<Endpoint>> masters(Connection& conn);

}  // namespace rcoord::cluster
