#pragma once
/// `rcoord limit …`: registration of the verbs, and the views of their results.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "context.hpp"
#include "limit.hpp"

namespace rcoord::cmd {
void add_limit(CLI::App& app, Context& ctx);
}  // namespace rcoord::cmd

namespace rcoord::limit {
void to_json(nlohmann::ordered_json& j, const Decision& r);
std::string to_text(const Decision& r);
void to_json(nlohmann::ordered_json& j, const Waited& r);
std::string to_text(const Waited& r);
void to_json(nlohmann::ordered_json& j, const MultiDecision& r);
std::string to_text(const MultiDecision& r);
void to_json(nlohmann::ordered_json& j, const MultiWaited& r);
std::string to_text(const MultiWaited& r);

/// A rate as options write it: `10/s`, `5/m`, `1000/h`, `100/10s`.
std::string rate_text(const Rate& rate);

/// The result of `limit reset`.
struct Reset {
  bool reset = false;
  std::string key;
};
void to_json(nlohmann::ordered_json& j, const Reset& r);
std::string to_text(const Reset& r);
}  // namespace rcoord::limit
