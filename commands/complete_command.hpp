#pragma once
/// `rcoord complete …`: registration of the verbs, and the views of their results.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "complete.hpp"
#include "context.hpp"

namespace rcoord::cmd {
void add_complete(CLI::App& app, Context& ctx);
}  // namespace rcoord::cmd

namespace rcoord::complete {
/// Sets `j[field]`, plus `j[field + "_base64"]` with the exact bytes when `text` is not UTF-8
/// (JSON shows the bad bytes as U+FFFD), as queue messages do.
void put_text(nlohmann::ordered_json& j, const std::string& field, const std::string& text);
/// One term of `complete add`: `{"term":…,"added":…}`, plus `"score"` when it has one.
void to_json(nlohmann::ordered_json& j, const Added& r);
/// One term of `complete remove`: `{"term":…,"removed":…}`.
void to_json(nlohmann::ordered_json& j, const Removed& r);
/// One suggestion: `{"term":…,"score":…}`.
void to_json(nlohmann::ordered_json& j, const Suggestion& r);
/// `complete recent push`: `{"list":…,"item":…,"length":…}`; text: the length.
void to_json(nlohmann::ordered_json& j, const Pushed& r);
std::string to_text(const Pushed& r);

/// The totals of `complete add --summary`.
struct AddSummary {
  std::string index;
  std::uint64_t terms = 0;
  std::uint64_t added = 0;
};
void to_json(nlohmann::ordered_json& j, const AddSummary& r);
std::string to_text(const AddSummary& r);

/// A score as JSON: an integer when it is one, else a number.
nlohmann::ordered_json score_json(double score);
}  // namespace rcoord::complete
