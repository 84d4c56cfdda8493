#pragma once
/// `rcoord signal …` and `rcoord latch …`: registration of the verbs, and the views of their
/// results.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "context.hpp"
#include "latch.hpp"
#include "signaling.hpp"

namespace rcoord::cmd {
void add_signal(CLI::App& app, Context& ctx);
void add_latch(CLI::App& app, Context& ctx);
}  // namespace rcoord::cmd

namespace rcoord::signaling {
void to_json(nlohmann::ordered_json& j, const Sent& r);
std::string to_text(const Sent& r);
void to_json(nlohmann::ordered_json& j, const Received& r);
std::string to_text(const Received& r);
}  // namespace rcoord::signaling

namespace rcoord::latch {
void to_json(nlohmann::ordered_json& j, const Initialized& r);
std::string to_text(const Initialized& r);
void to_json(nlohmann::ordered_json& j, const Counted& r);
std::string to_text(const Counted& r);
void to_json(nlohmann::ordered_json& j, const Waited& r);
std::string to_text(const Waited& r);

/// `latch status` prints `field: value` lines (`latch down` prints the bare count).
struct StatusView {
  Status status;
};
void to_json(nlohmann::ordered_json& j, const StatusView& r);
std::string to_text(const StatusView& r);
}  // namespace rcoord::latch
