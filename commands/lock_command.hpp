#pragma once
/// `rcoord lock …`: registration of the verbs, and the views of their results.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "context.hpp"
#include "lock.hpp"

namespace rcoord::cmd {
void add_lock(CLI::App& app, Context& ctx);
/// A server time (ms since the epoch) on the reader's clock: `02:00:03` today,
/// `2026-11-24 02:00:03` before.
std::string local_clock(std::int64_t epoch_ms);
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
void to_json(nlohmann::ordered_json& j, const Freed& r);
std::string to_text(const Freed& r);

/// Who holds a busy lock, as the line that says it is busy goes on: `held by
/// deploy@web-3 (pid 4242, backup.sh) since 02:00:03, renewing` (a run form, which renews
/// until its command ends), `…, expires in 4m10s` (a `lock acquire`, or a take kept by
/// --min-hold), `held by 3 readers, among them …`. `since` shows the server time of the take
/// (ms since the epoch) on the reader's clock. "" when it is not held. Not escaped: the
/// printer escapes the whole line.
std::string busy_text(const Status& s, const std::function<std::string(std::int64_t)>& since);

void to_json(nlohmann::ordered_json& j, const Released& r);
std::string to_text(const Released& r);
}  // namespace rcoord::lock
