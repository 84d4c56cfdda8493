#pragma once
/// `rcoord lock …` with three or more --url: the verbs on a Redlock, and the views of their
/// results (the single-server fields plus nodes, quorum, acquired_on, validity_ms).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "context.hpp"
#include "hold.hpp"
#include "lock.hpp"
#include "redlock.hpp"

namespace rcoord::cmd::redlock_verbs {

/// True when the settings name a Redlock (three or more --url).
bool active(const Context& ctx);

int acquire(Context& ctx, const std::string& name, lock::AcquireOptions opts);
int release(Context& ctx, const std::string& name, const std::string& token);
int extend(Context& ctx, const std::string& name, const std::string& token, Millis ttl);
int status(Context& ctx, const std::string& name, std::optional<Millis> watch);
int break_lock(Context& ctx, const std::string& name);

struct RunOptions {
  lock::AcquireOptions acquire;
  Conflict conflict{};
  Millis kill_grace{10'000};
  Millis min_hold{0};
  std::vector<std::string> command;
  std::optional<Millis> max_run{};  ///< --max-run; nullopt: no limit
};
int run(Context& ctx, const std::string& name, RunOptions opts);

}  // namespace rcoord::cmd::redlock_verbs

namespace rcoord::redlock {
void to_json(nlohmann::ordered_json& j, const Acquired& r);
std::string to_text(const Acquired& r);
void to_json(nlohmann::ordered_json& j, const Released& r);
std::string to_text(const Released& r);
void to_json(nlohmann::ordered_json& j, const Extended& r);
std::string to_text(const Extended& r);
void to_json(nlohmann::ordered_json& j, const Status& r);
std::string to_text(const Status& r);
void to_json(nlohmann::ordered_json& j, const Broken& r);
std::string to_text(const Broken& r);
}  // namespace rcoord::redlock
