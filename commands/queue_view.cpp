#include "queue_view.hpp"

#include <fmt/format.h>

#include "holder_view.hpp"
#include "text.hpp"

namespace rcoord::queue {

void to_json(nlohmann::ordered_json& j, const Message& m) {
  j = {{"id", m.id}, {"message", m.message}};
  if (!valid_utf8(m.message)) j["message_base64"] = base64(m.message);
  j["attempt"] = m.attempt;
}

std::string to_records(const std::vector<Message>& messages, RecordStyle style) {
  std::string out;
  for (const auto& m : messages) {
    if (style.header) out += fmt::format("{} {} {}\n", m.id, m.attempt, m.message.size());
    out += m.message;
    out += style.terminator;
  }
  return out;
}

void to_json(nlohmann::ordered_json& j, const Pushed& r) {
  j = {{"name", r.name}, {"pushed", r.pushed}, {"length", r.length}};
}
std::string to_text(const Pushed& r) { return std::to_string(r.length); }

void to_json(nlohmann::ordered_json& j, const Length& r) {
  j = {{"name", r.name}, {"length", r.length}};
}
std::string to_text(const Length& r) { return std::to_string(r.length); }

void to_json(nlohmann::ordered_json& j, const Acked& r) {
  j = {{"acked", r.acked}, {"name", r.name}, {"id", r.id}};
}
std::string to_text(const Acked& r) { return r.acked ? "acked" : ""; }

std::string state_name(NackState s) {
  switch (s) {
    case NackState::kReady:
      return "ready";
    case NackState::kDelayed:
      return "delayed";
    case NackState::kDead:
      return "dead";
    case NackState::kNotInFlight:
      break;
  }
  return "";
}

void to_json(nlohmann::ordered_json& j, const Nacked& r) {
  j = {{"nacked", r.state != NackState::kNotInFlight},
       {"name", r.name},
       {"id", r.id},
       {"state", state_name(r.state)}};
}
std::string to_text(const Nacked& r) { return state_name(r.state); }

void to_json(nlohmann::ordered_json& j, const Stats& r) {
  j = {{"ready", r.ready}, {"delayed", r.delayed}, {"in_flight", r.in_flight}, {"dead", r.dead}};
}
std::string to_text(const Stats& r) {
  return fmt::format("ready: {}\ndelayed: {}\nin_flight: {}\ndead: {}\n", r.ready, r.delayed,
                     r.in_flight, r.dead);
}

void to_json(nlohmann::ordered_json& j, const Counted& r) {
  j = {{"name", r.name}, {r.verb, r.count}};
}
std::string to_text(const Counted& r) { return std::to_string(r.count); }

}  // namespace rcoord::queue
