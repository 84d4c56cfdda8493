#pragma once
/// An object rcoord keeps and its state as a listing pass read it (inventory.hpp walks the
/// keyspace for them; inventory_probe.hpp reads and shows the states of most types).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rcoord::inventory {

/// One figure `rcoord metrics` exports about an object: the metric's name (SPEC §5), the
/// value of its `state` label where it has one (a queue's messages), and the value.
struct Gauge {
  std::string_view metric;
  std::string_view state;
  double value = 0;
};

/// The take counters of a lock, semaphore or election (SPEC §6 contention you can see), as its
/// take and renewal scripts keep them (src/lua/lib/contention.lua).
struct Contention {
  /// The upper bounds of the wait histogram's buckets, in ms; the last bucket is above them.
  static constexpr std::array<std::int64_t, 13> kBoundsMs = {
      5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000};
  std::int64_t acquired = 0;  ///< takes that got it
  std::int64_t busy = 0;      ///< calls that found it taken at their first try
  std::int64_t lost = 0;      ///< renewals that found the lease gone
  std::int64_t wait_ms = 0;   ///< the waits of all takes, summed
  /// Takes per bucket of their wait (not cumulative): [i] waited at most kBoundsMs[i] (and
  /// more than the bound before), the last one more than 60 s.
  std::array<std::int64_t, kBoundsMs.size() + 1> waits{};
};

/// An object and its state as one pass read it.
struct Object {
  std::string type;  ///< lock | sem | limit | bloom | pf | complete | recent | elect | queue |
                     ///< signal | latch
  std::string name;
  std::string state;   ///< one line, e.g. "held by 3f9d57ad… for 12.3s, fence 7"
  std::string holder;  ///< who holds or leads it: a token's start, a leader's id, "3 readers"
  std::int64_t waiting = -1;  ///< processes waiting for it; -1 where waiting means nothing
  std::int64_t ttl_ms = -1;   ///< time left of the hold, lease or window; -1 none
  /// How long ago its state last changed, where the server records it (when a lock's holder
  /// took it); -1 unknown.
  std::int64_t age_ms = -1;
  /// Its state less what only counts down (TTLs): two readings with the same fingerprint
  /// show no change in between.
  std::string fingerprint;
  /// Until an object given --expire ends (bloom, pf, complete, recent); -1: it does not.
  std::int64_t expires_in_ms = -1;
  std::vector<Gauge> gauges;  ///< what `rcoord metrics` exports about it
  /// A lock's, semaphore's or election's take counters, when the pass read them (metrics).
  std::optional<Contention> contention;
};

}  // namespace rcoord::inventory
