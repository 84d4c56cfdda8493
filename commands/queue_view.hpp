#pragma once
/// The views of `rcoord queue …`'s results: JSON objects, and text records byte-exact.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "queue.hpp"

namespace rcoord::queue {

/// One message as a JSON object: `{"id":…,"message":…,"attempt":N}`. `message` is the text
/// when the bytes are valid UTF-8 (control characters and NUL escaped by JSON, so exact);
/// otherwise invalid bytes show as U+FFFD there and `message_base64` carries the exact bytes.
void to_json(nlohmann::ordered_json& j, const Message& m);

/// How text mode frames a message: its raw bytes, then a terminator.
struct RecordStyle {
  bool header = false;  ///< a line `ID ATTEMPT BYTES` first, so any bytes can be read back
  char terminator = '\n';
};
/// The text records of `messages`, byte-exact.
std::string to_records(const std::vector<Message>& messages, RecordStyle style);

/// The result of `queue push`.
struct Pushed {
  std::string name;
  std::int64_t pushed = 0;
  std::int64_t length = 0;  ///< waiting afterwards: ready + delayed
};
void to_json(nlohmann::ordered_json& j, const Pushed& r);
std::string to_text(const Pushed& r);

/// The result of `queue len`.
struct Length {
  std::string name;
  std::int64_t length = 0;
};
void to_json(nlohmann::ordered_json& j, const Length& r);
std::string to_text(const Length& r);

/// The result of `queue ack`.
struct Acked {
  bool acked = false;
  std::string name;
  std::string id;
};
void to_json(nlohmann::ordered_json& j, const Acked& r);
std::string to_text(const Acked& r);

/// The result of `queue nack`.
struct Nacked {
  std::string name;
  std::string id;
  NackState state = NackState::kNotInFlight;
};
void to_json(nlohmann::ordered_json& j, const Nacked& r);
std::string to_text(const Nacked& r);
/// "ready", "delayed", "dead", or "" when it was not in flight.
std::string state_name(NackState s);

void to_json(nlohmann::ordered_json& j, const Stats& r);
std::string to_text(const Stats& r);

/// The result of `queue replay` and `queue purge`.
struct Counted {
  std::string verb;  ///< the JSON field: "replayed" or "purged"
  std::string name;
  std::int64_t count = 0;
};
void to_json(nlohmann::ordered_json& j, const Counted& r);
std::string to_text(const Counted& r);

}  // namespace rcoord::queue
