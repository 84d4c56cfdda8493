#pragma once
/// Where a command must go: the redirect replies (MOVED, ASK, TRYAGAIN) a Redis Cluster node
/// answers for a slot it does not serve, following them with a bounded budget, and WAIT for
/// replica acknowledgements on the node a write went to.
///
/// rcoord needs no slot map: every key of one object shares one hash tag, so a command on
/// one object goes to one node, and a session that is told MOVED simply moves there.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "duration.hpp"
#include "errors.hpp"
#include "reply.hpp"
#include "session.hpp"
#include "url.hpp"

namespace rcoord {

/// Fewer replicas acknowledged a write within the timeout than --wait-replicas asked for.
/// Exit 3, like any other doubt about whether a write is safe.
class ReplicaShortfall : public Error {
 public:
  using Error::Error;
};

/// Waits (Redis WAIT, up to the I/O timeout or what is left before the session's deadline)
/// until `replicas` replicas acknowledged every write `session` made. Throws
/// ReplicaShortfall when fewer did.
void await_replicas(Session& session, int replicas);

namespace cluster {

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

/// "host:port" (host may be empty, or an IPv6 address with colons) into `host` and `port`;
/// false when it is not of that form.
bool split_address(std::string_view address, std::string& host, int& port);

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

/// The replies of a pipeline sent through a cluster's redirects.
struct Routed {
  std::vector<Reply> replies;
  /// The node that served the pipeline through an ASK redirect (its writes are there, so
  /// their WAIT must be too); empty when `here` served it.
  std::optional<Session> asked;
};

/// Sends `commands` on `here` as Session::exchange() does, following redirects: on MOVED
/// `here` moves to the node named (for good: the next commands go there too), on ASK the
/// commands are sent once to the node named, after ASKING, and TRYAGAIN is retried after a
/// short pause; all bounded by a Budget. A pipeline only partly redirected returns its
/// MOVED/ASK error replies in place.
Routed send_routed(Session& here, const std::vector<Args>& commands, Millis extra);

}  // namespace cluster
}  // namespace rcoord
