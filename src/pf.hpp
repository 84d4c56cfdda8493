#pragma once
/// HyperLogLog counts of distinct items (Redis PFADD / PFCOUNT / PFMERGE).
///
/// Keys: `<prefix>{pf:KEY}`, a Redis HyperLogLog string (at most 12 KiB; standard error
/// 0.81 %). Bulk adds send PFADD with 100 items per command, pipelined, then, once the input
/// proves large, the registers its items raise (src/hll.hpp) instead of the items.

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "hll.hpp"
#include "keys.hpp"

namespace rcoord::pf {

/// Items per PFADD command.
constexpr std::size_t kItemsPerCommand = 100;
/// Items per batch (one pipelined write) that bulk verbs should use.
constexpr std::size_t kBatchSize = 2000;
/// Items (or bytes of items) gathered into registers before they are merged into the key.
constexpr std::size_t kItemsPerMerge = 32768;
constexpr std::size_t kBytesPerMerge = std::size_t{4} << 20;

/// Member names are the JSON fields.
struct Added {
  std::string key;
  std::uint64_t items = 0;
  bool changed = false;  ///< the estimate (some register) changed
};

/// Adds items batch by batch. The first batch goes as PFADDs: a small input leaves the key as
/// PFADD makes it (sparse, a few hundred bytes, while it counts few items). Later batches are
/// hashed here into registers, and every kItemsPerMerge items one script merges them into the
/// key when it is dense by then (it is after a few thousand distinct items): 12 KiB on the
/// wire instead of the items, and far less work for the server. When it is not (still sparse,
/// gone meanwhile, not a HyperLogLog), the gathered items go as PFADDs after all. PFADDs are
/// pipelined: the server works on two batches in flight while the caller reads the next.
/// `changed` is exact either way: the script compares the key's registers before and after.
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
  void add_items(const std::vector<std::string>& items);
  void add_pipelined(const std::vector<std::string>& items);
  void add_routed(const std::vector<std::string>& items);
  void add_expiring(const std::vector<std::string>& items);
  /// Hashes `items` into gathered_ and keeps them (for PFADD should the merge not be done).
  void gather(const std::vector<std::string>& items);
  void merge_gathered();
  void add_gathered_items();

  Connection& conn_;
  bool routed_ = false;  ///< a first batch went through pipeline() (cluster redirects)
  bool past_first_batch_ = false;
  std::string key_;
  std::string scratch_key_;  ///< exists only inside the merging script
  Millis expire_;
  hll::Registers gathered_;
  std::string gathered_bytes_;              ///< the gathered items, back to back
  std::vector<std::size_t> gathered_ends_;  ///< where each ends in gathered_bytes_
  std::deque<std::size_t> in_flight_;       ///< per batch sent, the PFADD replies still to read
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
