#pragma once
/// `rcoord elect …`: registration of the verbs, and the views of their results.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "context.hpp"
#include "elect.hpp"

namespace rcoord::cmd {
void add_elect(CLI::App& app, Context& ctx);
}  // namespace rcoord::cmd

namespace rcoord::elect {
void to_json(nlohmann::ordered_json& j, const Campaign& r);
std::string to_text(const Campaign& r);
void to_json(nlohmann::ordered_json& j, const Resigned& r);
std::string to_text(const Resigned& r);
void to_json(nlohmann::ordered_json& j, const Status& r);
std::string to_text(const Status& r);

/// One line of `elect observe`: the state after a change of leader.
struct Change {
  Status state;
};
void to_json(nlohmann::ordered_json& j, const Change& r);
std::string to_text(const Change& r);
}  // namespace rcoord::elect
