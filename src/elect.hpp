#pragma once
/// Leader election: a lease with a server-side expiry, renewed by the leader, and a term
/// that strictly increases on every change of leader (a fencing token for the leader's
/// writes).
///
/// Keys: `<prefix>{elect:NAME}` hash {id, term} whose TTL is the lease; `…:term` the term
/// counter (kept forever, so terms never go back); `…:wake` a list that a resignation pushes
/// to and waiting candidates BLPOP. Changes of leader are published on the channel
/// `…:changes`.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "connection.hpp"
#include "duration.hpp"
#include "history.hpp"
#include "identity.hpp"
#include "keys.hpp"
#include "lease.hpp"
#include "script.hpp"

namespace rcoord::elect {

struct CampaignOptions {
  std::string id;  ///< who campaigns; must not be empty
  Millis ttl{10'000};
  std::optional<Millis> wait;  ///< nullopt: try once; Millis::max(): forever
  /// Only take a vacancy: a live lease of the same id counts as someone else's (`elect run`).
  bool exclusive = false;
  /// This process's secret, stored with a leadership it wins (see resign()); empty: random.
  std::string token;
  std::string who{};  ///< who campaigns: pack() of identity.hpp ("" records none)
};

/// Member names are the JSON fields of SPEC §3.
struct Campaign {
  bool leader = false;
  std::string name;
  std::string id;           ///< the candidate's id
  std::int64_t term = 0;    ///< ours when leader; the current leader's when not
  std::int64_t ttl_ms = 0;  ///< our lease when leader; the current leader's remaining when not
  std::int64_t waited_ms = 0;
  std::string leader_id;  ///< who leads (== id when leader)
  /// When the request that took it was sent (not printed): its lease counts from there.
  std::chrono::steady_clock::time_point sent{};
  /// Who campaigned (CampaignOptions::who; not printed): its give-back's history says so.
  std::string who{};
};

/// Becomes leader of `name`, waiting up to opts.wait; a waiting candidate sleeps in BLPOP
/// on the wake list (pushed by a resignation) and retries when the leader's lease runs
/// out. Campaigning again while leading renews the lease and keeps the term. Throws
/// Error(kConnection/kServer), Error(kInterrupted) on a signal.
Campaign campaign(Connection& conn, const Keys& keys, std::string_view name,
                  const CampaignOptions& opts);

/// Extends the lease if `id` still leads with `term`; false otherwise (never takes over).
bool renew(Connection& conn, const Keys& keys, std::string_view name, std::string_view id,
           std::int64_t term, Millis ttl);

/// Which leadership resign() may end: `id`'s, and when given, only of `term` or only one
/// won by the process holding `token`.
struct ResignOptions {
  std::string id;
  std::optional<std::int64_t> term;
  std::string token;
  Ending ending{};  ///< what the history records (`resigned`, a `run` form's `lost`...)
};

struct Resigned {
  bool resigned = false;
  std::string name;
  std::string id;
  std::int64_t term = 0;  ///< the term given up
};
/// Steps down if opts.id leads (matching opts.term and opts.token when given), announces
/// the vacancy, and wakes one candidate.
Resigned resign(Connection& conn, const Keys& keys, std::string_view name,
                const ResignOptions& opts);

/// The lease of the leadership `won` by the process holding `token` (campaigned for with a
/// TTL of `ttl`), for a command run while leading: renewed by renew() for its term, given
/// back by resign() of exactly that term and token. `conn` and `keys` must outlive it.
Lease lease(Connection& conn, const Keys& keys, const Campaign& won, const std::string& token,
            Millis ttl);

struct Status {
  bool leader = false;  ///< whether anyone leads
  std::string name;
  std::string id;           ///< the leader's id; empty when none
  std::int64_t term = 0;    ///< the leader's term; when none, the last term handed out
  std::int64_t ttl_ms = 0;  ///< the leader's remaining lease
  Holder holder{};          ///< which process leads, since when
};
Status status(Connection& conn, const Keys& keys, std::string_view name);
/// status() as a call for a pipeline of many objects (send_calls); decode with decode_status.
Call status_call(const Keys& keys, std::string_view name);

// Pure decoders of the scripts' replies (no I/O), for tests and fuzzing. Both throw
// Error(kServer) for a reply of another shape.
/// One answer of elect_campaign: fills leader, term, ttl_ms and leader_id.
void decode_campaign(const redisReply* r, Campaign& out);
/// The answer of elect_status: everything but the name.
Status decode_status(const redisReply* r);

/// Calls `on_change` with the state at the start, then once per change of leader as it
/// happens (a new leader, or a vacancy after a resignation or an expired lease), for
/// `duration` (nullopt: until interrupted). Pushed by pub/sub; an expiry, which nobody
/// announces, is seen by reading the state when the known lease runs out. States are
/// reported in order and never twice. Throws Error(kInterrupted) on a signal.
void observe(Connection& conn, const Keys& keys, std::string_view name,
             std::optional<Millis> duration, const std::function<void(const Status&)>& on_change);

}  // namespace rcoord::elect
