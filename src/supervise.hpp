#pragma once
/// Runs a child command while a lease (lock, permit, leadership) is held: renews the lease,
/// forwards termination signals to the child's process group, and terminates the child when
/// the lease is lost. Shared by `lock run`, `sem run` and `elect run`.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "duration.hpp"

namespace rcoord {

/// What the supervisor needs to keep a lease alive.
struct Lease {
  /// The lease length: renewed every ttl/3; lost when no renewal succeeded for this long.
  Millis ttl{30'000};
  /// Renews the lease. true: still ours; false: lost (someone else holds it, or it is gone).
  /// May throw Error(kConnection): retried until the lease would have ended.
  std::function<bool()> renew;
};

struct SuperviseOptions {
  std::vector<std::string> command;                      ///< argv; no shell
  std::vector<std::pair<std::string, std::string>> env;  ///< added to the child's environment
  Millis kill_grace{10'000};                             ///< SIGTERM → SIGKILL delay on loss
  /// When >= 0, the child's standard input (dup2'ed onto fd 0 before exec; not closed by
  /// supervise). Otherwise the child inherits rcoord's.
  int stdin_fd = -1;
  /// Graceful mode, for commands that are one of many (`queue consume`): the child stays in
  /// the background (no terminal handover), and the first termination signal rcoord receives
  /// is only recorded (signals::pending()), so the child can finish its work; a second one
  /// is forwarded as usual.
  bool graceful = false;
};

struct SuperviseResult {
  int exit_code = 0;         ///< the child's code, or 128+N if it died of signal N
  bool lost = false;         ///< the lease was lost while the child ran
  std::string lost_reason;   ///< why, for the message
  int forwarded_signal = 0;  ///< the last termination signal rcoord received and forwarded
};

/// Forks and execs `opts.command` in a new process group and supervises it until it exits.
/// Throws Error(kUsage) for an empty command; the child exits 127 (126) when exec fails.
SuperviseResult supervise(const SuperviseOptions& opts, Lease& lease);

}  // namespace rcoord
