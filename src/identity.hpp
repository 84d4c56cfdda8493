#pragma once
/// Who took something (SPEC §5 "holder identity"): the process that takes a lock, permit,
/// leadership or message says who it is in the same script as the take, and the status
/// scripts give it back with the server time of the take.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rcoord {

struct Identity {
  std::string host;  ///< the machine's host name
  std::int64_t pid = 0;
  std::string user;  ///< login name of the effective uid (`uid N` when it has none)
  /// The verb (`lock acquire`), or for a run form the basename of the command's argv[0]:
  /// never its arguments, which may hold secrets.
  std::string cmd;
  std::string note;  ///< --note, $RCOORD_NOTE, or a link to the CI run; may be empty
  /// The W3C trace id of $TRACEPARENT (32 lowercase hex digits), or empty: recorded in every
  /// history event the call causes (SPEC §6 "service managers and traces").
  std::string trace_id{};
  /// Whether anything was recorded (an older rcoord's take recorded nothing).
  bool known() const { return !host.empty() || pid != 0 || !user.empty(); }
};

/// This process: its host, pid and effective user, with `cmd` and `note` as given.
Identity this_process(std::string cmd, std::string note);

/// The login name of `uid` as the C library finds it, or `uid N` when it has no entry.
std::string user_name(uid_t uid);

/// What a run form records as `cmd`: the basename of argv[0] (`/opt/bin/backup.sh --key x`
/// gives `backup.sh`).
std::string command_basename(std::string_view argv0);

/// The link to the CI run this process is part of, built from the CI's own variables
/// (GitHub Actions, GitLab CI, Buildkite), or nullopt outside CI. `variable` reads one
/// environment variable (nullopt or empty: unset).
std::optional<std::string> ci_run_link(
    const std::function<std::optional<std::string>(std::string_view)>& variable);

/// The trace id of a W3C `traceparent` value (`00-<trace id>-<parent id>-<flags>`), or
/// nullopt when it is not a valid one: a version of two hex digits other than `ff`, a trace
/// id of 32 and a parent id of 16 lowercase hex digits, neither all zeros, and two hex digits
/// of flags; version 00 has nothing after them, a later version may add `-…` fields.
std::optional<std::string> trace_id_of(std::string_view traceparent);

/// The identity as one string for a script's ARGV, stored as is: its fields joined by the
/// unit separator (0x1f), the trace id last and only when there is one. A control byte inside a
/// field (a note with a newline or a tab) becomes a space, so a field never spills into the next or
/// forges a line of text output.
std::string pack(const Identity& who);

/// A holder as a status script reports it.
struct Holder {
  Identity who;
  std::int64_t acquired_at = -1;  ///< server time of the take, ms since the epoch; -1 unknown
  std::int64_t held_ms = -1;      ///< since acquired_at, by the server's clock; -1 unknown
  /// Whether the take recorded who took it (an older rcoord's did not).
  bool known() const { return who.known(); }
};

/// Reads what pack() made (an empty or foreign string gives an unknown identity).
Identity unpack(std::string_view packed);

/// RFC 3339 UTC with milliseconds (`2026-11-25T02:00:03.120Z`) of ms since the epoch.
std::string rfc3339(std::int64_t epoch_ms);

/// How an operator reads a holder in one line: `backup@web-3 (pid 4242, backup.sh)`; "" when
/// the identity is unknown.
std::string describe(const Identity& who);

/// A client name for CLIENT SETNAME: `rcoord:<what>`, every byte Redis refuses in a name
/// (space, control, non-ASCII) turned into '_', cut to kMaxClientName bytes.
std::string client_name(std::string_view what);
constexpr std::size_t kMaxClientName = 128;

}  // namespace rcoord
