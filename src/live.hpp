#pragma once
/// The model of `rcoord top`: the objects of the last pass, each with the time its state was
/// last seen to change, most recently changed first.
///
/// A change is a new fingerprint (inventory::Object::fingerprint: the state less what only
/// counts down, such as a TTL). The board remembers each object's fingerprint from one pass
/// to the next, so a change is seen within one refresh. An object seen for the first time is
/// placed by the time the server records for its state, where it records one (when a lock's
/// holder took it), so a lock taken before top started is placed by its take. Objects neither seen
/// to change nor dated by the server come last, by type and name.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "inventory.hpp"

namespace rcoord::live {

using Clock = std::chrono::steady_clock;

/// What tells objects apart from one pass to the next: their type and name.
std::string key_of(const inventory::Object& o);

struct Row {
  inventory::Object object;
  std::optional<Clock::time_point> changed;  ///< nullopt: not known
};

class Board {
 public:
  /// Takes a pass's objects, read at `now`: an object not on the board before is new (changed
  /// now, or when the server dates its state); one whose fingerprint differs changed now; one
  /// that is gone leaves the board (if it comes back, it is new).
  void update(std::vector<inventory::Object> objects, Clock::time_point now);

  /// The rows whose name contains `filter` (ASCII letters in any case; "" all), most recently
  /// changed first.
  std::vector<const Row*> rows(std::string_view filter) const;

  std::size_t size() const { return rows_.size(); }

 private:
  struct Seen {
    std::string fingerprint;
    std::optional<Clock::time_point> changed;
  };
  std::unordered_map<std::string, Seen> seen_;  ///< by type, NUL, name
  std::vector<Row> rows_;
  bool started_ = false;
};

/// True when `name` contains `filter`, ASCII letters compared without case.
bool name_matches(std::string_view name, std::string_view filter);

}  // namespace rcoord::live
