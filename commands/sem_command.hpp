#pragma once
/// `rcoord sem …`: counting semaphores. Registration of the verbs and views of the results.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "context.hpp"
#include "semaphore.hpp"

namespace rcoord::cmd {
void add_sem(CLI::App& app, Context& ctx);
}  // namespace rcoord::cmd

namespace rcoord::semaphore {
void to_json(nlohmann::ordered_json& j, const Taken& r);
std::string to_text(const Taken& r);
void to_json(nlohmann::ordered_json& j, const Status& r);
std::string to_text(const Status& r);
void to_json(nlohmann::ordered_json& j, const Freed& r);
std::string to_text(const Freed& r);

/// The result of `sem release` and `sem refresh`.
struct Changed {
  std::string verb;  ///< "released" | "refreshed"
  bool done = false;
  std::string name;
  std::int64_t ttl_ms = 0;  ///< refresh only
};
void to_json(nlohmann::ordered_json& j, const Changed& r);
std::string to_text(const Changed& r);
}  // namespace rcoord::semaphore
