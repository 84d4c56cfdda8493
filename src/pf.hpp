#pragma once
/// HyperLogLog counts of distinct items (Redis PFADD / PFCOUNT / PFMERGE).
///
/// Keys: `<prefix>{pf:KEY}`, a Redis HyperLogLog string (at most 12 KiB; standard error
/// 0.81 %). Bulk adds send PFADD with 100 items per command, pipelined.

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"

namespace rcoord::pf {

/// Items per PFADD command.
constexpr std::size_t kItemsPerCommand = 100;
/// Items per batch (one pipelined write) that bulk verbs should use.
constexpr std::size_t kBatchSize = 2000;

/// Member names are the JSON fields.
struct Added {
  std::string key;
  std::uint64_t items = 0;
  bool changed = false;  ///< the estimate (some register) changed
};

/// Adds items batch by batch; the server works on the batches in flight (two: it never waits
/// for the next one to arrive) while the caller reads the next.
class Adder {
 public:
  /// With `expire` above 0 each batch is added and the key given that expiry in one script
  /// (so it never exists without it); 0 sends plain pipelined PFADDs and keeps its expiry.
  Adder(Connection& conn, const Keys& keys, std::string_view key, Millis expire = Millis{0});
  ~Adder();
  Adder(const Adder&) = delete;
  Adder& operator=(const Adder&) = delete;

  void add(const std::vector<std::string>& items);
  /// Waits for the last batch; the totals.
  const Added& finish();

 private:
  /// Reads the replies of the oldest batch in flight.
  void complete_oldest();
  void complete_all();
  void add_routed(const std::vector<std::string>& items);
  void add_expiring(const std::vector<std::string>& items);

  Connection& conn_;
  bool routed_ = false;  ///< a first batch went through pipeline() (cluster redirects)
  std::string key_;
  Millis expire_;
  std::deque<std::size_t> in_flight_;  ///< per batch sent, the PFADD replies still to read
  std::string out_;
  Added result_;
};

struct Count {
  std::vector<std::string> keys;
  std::int64_t count = 0;
};
/// The estimated number of distinct items in the union of `names` (missing keys are empty).
Count count(Connection& conn, const Keys& keys, const std::vector<std::string>& names);

struct Merged {
  std::string dest;
  std::vector<std::string> keys;
  std::int64_t count = 0;  ///< of dest afterwards
};
/// Merges `sources` into `dest` (dest's own items stay). With `expire` above 0, dest ends that
/// long after the merge (set in the same script); 0 keeps its expiry. Throws Error(kServer)
/// on a key that is not a HyperLogLog.
Merged merge(Connection& conn, const Keys& keys, std::string_view dest,
             const std::vector<std::string>& sources, Millis expire = Millis{0});

/// A PFCOUNT reply (no I/O), for tests and fuzzing: Error(kServer) naming `key` when the
/// key holds something else or the reply has another shape.
std::int64_t decode_count(const Reply& r, std::string_view key);

}  // namespace rcoord::pf
