#include "live.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace rcoord::live {

std::string key_of(const inventory::Object& o) { return o.type + '\0' + o.name; }

namespace {

char fold(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Most recently changed first; never known to change last; then by type and name, so the
// order is stable from one pass to the next.
bool before(const Row& a, const Row& b) {
  if (a.changed.has_value() != b.changed.has_value()) return a.changed.has_value();
  if (a.changed && *a.changed != *b.changed) return *a.changed > *b.changed;
  return std::tie(a.object.type, a.object.name) < std::tie(b.object.type, b.object.name);
}

}  // namespace

bool name_matches(std::string_view name, std::string_view filter) {
  if (filter.empty()) return true;
  auto hit = std::search(name.begin(), name.end(), filter.begin(), filter.end(),
                         [](char a, char b) { return fold(a) == fold(b); });
  return hit != name.end();
}

void Board::update(std::vector<inventory::Object> objects, Clock::time_point now) {
  std::unordered_map<std::string, Seen> seen;
  seen.reserve(objects.size());
  std::vector<Row> rows;
  rows.reserve(objects.size());
  for (auto& object : objects) {
    std::string key = key_of(object);
    // When the server dates the state (a lock's take), that is when it changed.
    std::optional<Clock::time_point> dated;
    if (object.age_ms >= 0) dated = now - std::chrono::milliseconds(object.age_ms);
    std::optional<Clock::time_point> changed;
    auto before_now = seen_.find(key);
    if (before_now == seen_.end()) {
      // On the first pass nothing is seen to change: only the server's date places it.
      changed = started_ ? dated.value_or(now) : dated;
    } else if (before_now->second.fingerprint != object.fingerprint) {
      changed = now;
    } else {
      changed = before_now->second.changed;
    }
    seen.emplace(key, Seen{object.fingerprint, changed});
    rows.push_back(Row{std::move(object), changed});
  }
  std::sort(rows.begin(), rows.end(), before);
  seen_ = std::move(seen);
  rows_ = std::move(rows);
  started_ = true;
}

std::vector<const Row*> Board::rows(std::string_view filter) const {
  std::vector<const Row*> out;
  out.reserve(rows_.size());
  for (const auto& row : rows_) {
    if (name_matches(row.object.name, filter)) out.push_back(&row);
  }
  return out;
}

}  // namespace rcoord::live
