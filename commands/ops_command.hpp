#pragma once
/// Operator commands: `rcoord ping`, `rcoord doctor`, `rcoord ls`.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "context.hpp"
#include "doctor.hpp"
#include "inventory.hpp"
#include "remove.hpp"
#include "server.hpp"

namespace rcoord::cmd {
void add_ops(CLI::App& app, Context& ctx);
void add_doctor(CLI::App& app, Context& ctx);
void add_ls(CLI::App& app, Context& ctx);
void add_rm(CLI::App& app, Context& ctx);

/// The --type option of ls, top and metrics: one of inventory::types().
void add_type_option(CLI::App* verb, std::string& type);

/// How `ls` shows a name in text: escaped (text.hpp), and in single quotes when it holds a
/// space or a quote (`'nightly backup'`), so that where a name ends is never in doubt.
std::string listed_name(std::string_view name);
/// One line of `ls` text: the type, the name (listed_name) padded to `name_width` columns,
/// two spaces, the state.
std::string listed_line(const inventory::Object& o, int name_width);
}  // namespace rcoord::cmd

namespace rcoord::removal {
void to_json(nlohmann::ordered_json& j, const Removed& r);
std::string to_text(const Removed& r);
}  // namespace rcoord::removal

namespace rcoord::inventory {
void to_json(nlohmann::ordered_json& j, const Object& r);
std::string to_text(const Object& r);
}  // namespace rcoord::inventory

namespace rcoord::doctor {
void to_json(nlohmann::ordered_json& j, const Finding& r);
std::string to_text(const Finding& r);
}  // namespace rcoord::doctor

namespace rcoord::server {
void to_json(nlohmann::ordered_json& j, const Ping& r);
std::string to_text(const Ping& r);
}  // namespace rcoord::server
