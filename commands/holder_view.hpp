#pragma once
/// How the status verbs show who holds something (SPEC §5 "holder identity"): the same
/// fields, in the same order, in every type's JSON and text.

#include <nlohmann/json.hpp>
#include <string>

#include "identity.hpp"

namespace rcoord::cmd {

/// Adds host, pid, user, cmd and note to `j`.
void add_identity(nlohmann::ordered_json& j, const Identity& who);

/// Adds host, pid, user, cmd, note, acquired_at and held_ms to `j`: the identity fields only
/// when the take recorded them (an older rcoord's did not), the times when known.
void add_holder(nlohmann::ordered_json& j, const Holder& h);

/// The same as `key: value` lines (each ending in a newline; "" when nothing is known), with
/// values escaped for text output.
std::string holder_lines(const Holder& h);

/// The end of a one-line listing of a holder (a semaphore's holder, a message in flight):
/// ` held_ms=N by user@host (pid P, cmd)`, each part only when known; text-escaped.
std::string holder_suffix(const Holder& h);

}  // namespace rcoord::cmd
