#pragma once
/// `rcoord gate …`: several locks, shared locks, semaphore permits and rate slots taken all
/// or nothing with one token (src/gate.hpp). Registration of the verbs and views of the results.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "context.hpp"
#include "gate.hpp"

namespace rcoord::cmd {
void add_gate(CLI::App& app, Context& ctx);
}  // namespace rcoord::cmd

namespace rcoord::gate {
void to_json(nlohmann::ordered_json& j, const Taken& r);
std::string to_text(const Taken& r);
void to_json(nlohmann::ordered_json& j, const Released& r);
std::string to_text(const Released& r);
void to_json(nlohmann::ordered_json& j, const Extended& r);
std::string to_text(const Extended& r);
void to_json(nlohmann::ordered_json& j, const Status& r);
std::string to_text(const Status& r);
}  // namespace rcoord::gate
