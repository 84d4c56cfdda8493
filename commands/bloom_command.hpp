#pragma once
/// `rcoord bloom …` and `rcoord pf …`: registration of the verbs, and the views of their
/// results.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "bloom.hpp"
#include "context.hpp"
#include "pf.hpp"

namespace rcoord::cmd {
void add_bloom(CLI::App& app, Context& ctx);
void add_pf(CLI::App& app, Context& ctx);
}  // namespace rcoord::cmd

namespace rcoord::bloom {
void to_json(nlohmann::ordered_json& j, const Reserved& r);
std::string to_text(const Reserved& r);
void to_json(nlohmann::ordered_json& j, const Info& r);
std::string to_text(const Info& r);

/// One item of `bloom add`: `{"item":…,"added":…}`, plus `"full":true` when refused.
void added_json(nlohmann::ordered_json& j, const ItemResult& r);
/// One item of `bloom test`: `{"item":…,"present":…}`.
void present_json(nlohmann::ordered_json& j, const ItemResult& r);

/// The totals of `bloom add --summary`.
struct AddSummary {
  std::string name;
  std::uint64_t items = 0;
  std::uint64_t added = 0;
  std::uint64_t present = 0;  ///< not added: it may have been present already
  std::uint64_t refused = 0;  ///< not added: the filter is full
};
void to_json(nlohmann::ordered_json& j, const AddSummary& r);
std::string to_text(const AddSummary& r);

/// The totals of `bloom test --summary`.
struct TestSummary {
  std::string name;
  std::uint64_t items = 0;
  std::uint64_t present = 0;
  std::uint64_t absent = 0;
};
void to_json(nlohmann::ordered_json& j, const TestSummary& r);
std::string to_text(const TestSummary& r);
}  // namespace rcoord::bloom

namespace rcoord::pf {
void to_json(nlohmann::ordered_json& j, const Added& r);
std::string to_text(const Added& r);
void to_json(nlohmann::ordered_json& j, const Count& r);
std::string to_text(const Count& r);
void to_json(nlohmann::ordered_json& j, const Merged& r);
std::string to_text(const Merged& r);
}  // namespace rcoord::pf
