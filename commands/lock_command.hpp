#pragma once
/// `rcoord lock …`: registration of the verbs, and the views of their results.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "context.hpp"
#include "lock.hpp"

namespace rcoord::cmd {
void add_lock(CLI::App& app, Context& ctx);
}  // namespace rcoord::cmd

namespace rcoord::lock {
void to_json(nlohmann::ordered_json& j, const Acquired& r);
std::string to_text(const Acquired& r);
void to_json(nlohmann::ordered_json& j, const Extended& r);
std::string to_text(const Extended& r);
void to_json(nlohmann::ordered_json& j, const Status& r);
std::string to_text(const Status& r);
void to_json(nlohmann::ordered_json& j, const Broken& r);
std::string to_text(const Broken& r);

/// The result of `lock release`.
struct Released {
  bool released = false;
  std::string name;
};
void to_json(nlohmann::ordered_json& j, const Released& r);
std::string to_text(const Released& r);
}  // namespace rcoord::lock
