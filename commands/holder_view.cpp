#include "holder_view.hpp"

#include <fmt/format.h>

#include "text.hpp"

namespace rcoord::cmd {

void add_identity(nlohmann::ordered_json& j, const Identity& who) {
  j["host"] = who.host;
  j["pid"] = who.pid;
  j["user"] = who.user;
  j["cmd"] = who.cmd;
  j["note"] = who.note;
  if (!who.trace_id.empty()) j["trace_id"] = who.trace_id;
}

void add_holder(nlohmann::ordered_json& j, const Holder& h) {
  if (h.known()) add_identity(j, h.who);
  if (h.acquired_at >= 0) j["acquired_at"] = rfc3339(h.acquired_at);
  if (h.held_ms >= 0) j["held_ms"] = h.held_ms;
}

std::string holder_lines(const Holder& h) {
  std::string out;
  if (h.known()) {
    out += fmt::format("host: {}\npid: {}\nuser: {}\ncmd: {}\nnote: {}\n", escape_text(h.who.host),
                       h.who.pid, escape_text(h.who.user), escape_text(h.who.cmd),
                       escape_text(h.who.note));
    if (!h.who.trace_id.empty()) out += fmt::format("trace_id: {}\n", escape_text(h.who.trace_id));
  }
  if (h.acquired_at >= 0) out += fmt::format("acquired_at: {}\n", rfc3339(h.acquired_at));
  if (h.held_ms >= 0) out += fmt::format("held_ms: {}\n", h.held_ms);
  return out;
}

std::string holder_suffix(const Holder& h) {
  std::string out;
  if (h.held_ms >= 0) out += fmt::format(" held_ms={}", h.held_ms);
  std::string who = describe(h.who);
  if (!who.empty()) out += " by " + escape_text(who);
  return out;
}

}  // namespace rcoord::cmd
