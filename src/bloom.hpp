#pragma once
/// Scalable Bloom filters kept in Redis bitmaps.
///
/// Keys: `<prefix>{bloom:NAME}` a hash of metadata (capacity, error_rate, expansion, hash,
/// layers, items, and per layer N: capacity:N, bits:N, hashes:N, used:N, items:N);
/// `<prefix>{bloom:NAME}:N` the bitmap of layer N (a string of ceil(bits/8) bytes, bit 0 the
/// most significant bit of byte 0, as SETBIT counts).
///
/// Hash: MurmurHash3_x64_128 of the item's bytes, seed 0, gives h1 and h2; the k positions
/// in a layer of m bits are pos_i = (h1 + i*h2 + (i^3 - i)/6) mod 2^64 mod m, i = 0..k-1
/// (enhanced double hashing). Sizing (size_for): k is floor or ceil of log2(1/p), whichever
/// needs fewer bits, and m = ceil(-k n / ln(1 - p^(1/k))), so (1 - e^(-kn/m))^k <= p.
/// Layer N has capacity n*expansion^N and error rate p*0.4^N; there are at most kMaxLayers.
///
/// Adds: the client computes the positions and sets them with BITFIELD (kItemsPerBitfield
/// items to a command), which is atomic and returns the old bits, so of two writers adding
/// one item exactly one sees a bit flip (added=true). Writers first take "slots" of the newest
/// layer from a Lua script (bloom_grant.lua), so together they never put more than a layer's
/// capacity into it; slots not needed are given back when the batch is settled.
///
/// Large adds to a filter whose layers hold at most kMaxMergeBytes in all gather items instead,
/// until their bits are worth the whole bitmaps (kMergeBytesPerBit, kMinGatherItems): the older
/// layers are read whole (GET; an item found there is present, as test_layers finds it), and
/// the others are merged into the newest layer, as far as it has room, in one transaction: GET
/// of the layer, SET of their bits to a scratch key, then BITOP OR (bloom_merge.lua). Each item
/// is answered from the bits as they were, in order, so the answers are those of BITFIELD,
/// duplicates within the group included.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"
#include "murmur3.hpp"

namespace rcoord::bloom {

/// The object type of a filter's keys (Keys::object, Keys::aux).
constexpr std::string_view kType = "bloom";

/// The key of layer `layer`'s bitmap: `<prefix>{bloom:NAME}:N`.
std::string layer_key(const Keys& keys, std::string_view name, std::size_t layer);

/// A layer holds at most 2^32 bits (512 MiB): BITFIELD offsets and Redis strings end there.
constexpr std::uint64_t kMaxBits = std::uint64_t{1} << 32;
/// Each new layer's error rate is the previous one's times this, so the rates of all layers
/// add up to less than 1/(1 - 0.4) = 1.67 x the reserved rate (p + 0.4p + 0.16p + ...),
/// however many there are. Not 0.5, whose sum tends to 2p itself: the sizing formula is a
/// little optimistic (a real layer at capacity shows a few percent more than its rate), and
/// with --expansion 1 the many full layers then passed the promised 2 x p (2.0-2.4 % for 1 %;
/// 1.3-1.8 % now).
constexpr double kTightening = 0.4;
/// A filter has at most this many layers. A scalable filter whose newest layer is full at the
/// cap (or whose next layer would pass kMaxBits) is full: adds are refused, as a nonscaling
/// filter's are, while test and info go on working.
constexpr std::size_t kMaxLayers = 64;
/// The name of the hash scheme above, stored in the metadata (field `hash`).
constexpr std::string_view kHashScheme = "murmur3-x64-128-edh";
/// `bloom add` on a missing filter creates one with these.
constexpr std::uint64_t kDefaultCapacity = 10000;
constexpr double kDefaultErrorRate = 0.01;
constexpr std::uint32_t kDefaultExpansion = 2;
/// Items per batch (one pipelined write) that bulk verbs should use.
constexpr std::size_t kBatchSize = 2000;
/// Items per BITFIELD command. The server runs a command's operations in order, so an item
/// answers exactly as with a command of its own (an item repeated within the command, or one
/// sharing bits with an earlier item, sees the bits that item set), while the server's cost
/// per command, parsing and dispatch, is shared by all of them.
constexpr std::size_t kItemsPerBitfield = 16;
/// A filter's bitmaps are read and merged whole only up to this size in all (memory stays flat).
constexpr std::size_t kMaxMergeBytes = std::size_t{4} << 20;
/// A group of items is merged as a bitmap once it sets at least one bit per this many bytes
/// of the bitmap: the server then reads, writes and replicates no more bytes than the
/// BITFIELD operations it replaces (about 40 bytes each), and does far less work per bit.
constexpr std::size_t kMergeBytesPerBit = 32;
/// At most this many items are gathered for one merge.
constexpr std::size_t kMaxGatherItems = 65536;
/// While the input goes on, a group is merged (or read) once it has this many items, too, so
/// that each group moves its bitmaps for many items; at the end of the input a smaller group
/// is merged when it is worth the bitmaps, else it goes by BITFIELD.
constexpr std::size_t kMinGatherItems = 16384;
/// Gathered items of this many bytes in all go at once (memory stays flat with long items):
/// merged when they are worth it, else by BITFIELD.
constexpr std::size_t kMaxGatherBytes = std::size_t{8} << 20;

struct Sizing {
  std::uint64_t bits = 0;
  std::uint32_t hashes = 0;
};
/// Bits and hash count that keep `capacity` items at or below `error_rate` (see above).
Sizing size_for(std::uint64_t capacity, double error_rate);

/// Calls f(position) for the `hashes` positions of an item with hash `h` in `bits` bits.
template <typename F>
void for_each_position(const Hash128& h, std::uint64_t bits, std::uint32_t hashes, F&& f) {
  std::uint64_t x = h.h1;
  std::uint64_t y = h.h2;
  for (std::uint32_t i = 0; i < hashes; ++i) {
    f(x % bits);
    x += y;      // x = h1 + (i+1)*h2 + ((i+1)^3 - (i+1))/6
    y += i + 1;  // y = h2 + (i+1)(i+2)/2
  }
}

struct Layer {
  std::uint64_t capacity = 0;
  std::uint64_t bits = 0;
  std::uint32_t hashes = 0;
  std::int64_t used = 0;   ///< slots granted (items added plus slots held by running batches)
  std::int64_t items = 0;  ///< items added and settled
};

/// The metadata of one filter.
struct Meta {
  std::uint64_t capacity = 0;   ///< of the first layer, as reserved
  double error_rate = 0;        ///< as reserved
  std::uint32_t expansion = 0;  ///< 0: nonscaling
  std::int64_t items = 0;
  std::vector<Layer> layers;
};

struct ReserveOptions {
  std::uint64_t capacity = kDefaultCapacity;
  double error_rate = kDefaultErrorRate;
  std::uint32_t expansion = kDefaultExpansion;
  bool nonscaling = false;
  Millis expire{0};  ///< every key of the filter ends this long after the reserve (0: never)
};

/// Member names are the JSON fields (SPEC: `bits, hashes, bytes`).
struct Reserved {
  bool reserved = false;  ///< false: it existed already (the figures are the existing ones)
  std::string name;
  std::uint64_t capacity = 0;
  double error_rate = 0;
  std::uint64_t bits = 0;
  std::uint32_t hashes = 0;
  std::uint64_t bytes = 0;
};
/// Creates filter `name`. reserved=false when it exists already. Throws Error(kUsage) for
/// bad sizes, Error(kServer) when the key holds something else.
Reserved reserve(Connection& conn, const Keys& keys, std::string_view name,
                 const ReserveOptions& opts);

/// Reads the metadata; false when there is no such filter. Throws Error(kServer) when the
/// key holds something else.
bool read_meta(Connection& conn, const Keys& keys, std::string_view name, Meta& meta);

// Pure decoders of the server's replies (no I/O), for tests and fuzzing. They throw
// Error(kServer) for a reply of another shape; `key` names the filter in errors.
/// The TYPE and HGETALL replies of read_meta.
bool decode_meta(const redisReply* type, const redisReply* all, const std::string& key, Meta& meta);
/// A BITFIELD array reply: whether every bit read was 1 (of all, or of `count` from `first`:
/// one item's of a command for several).
bool bits_all_ones(const redisReply* r);
bool bits_all_ones(const redisReply* r, std::size_t first, std::size_t count);
/// bloom_grant's reply: {status, layer, granted, layers}.
std::array<std::int64_t, 4> decode_grant(const redisReply* r);

/// The answer for one item: added (bloom add) or present (bloom test).
struct ItemResult {
  std::string item;
  bool yes = false;   ///< added / may be present
  bool full = false;  ///< add only: refused, the filter is full (nonscaling)
};

/// Adds items batch by batch. While the server sets the bits of one batch, the caller reads
/// the next, so add() returns the results of the batch *before* the one it is given.
class Adder {
 public:
  /// A missing filter is created with the defaults on the first add(). With `expire` above 0
  /// the filter is created with that expiry, and finish() sets it again on every key (so all
  /// of it ends `expire` after the last item went in); 0 leaves the expiry it has.
  Adder(Connection& conn, const Keys& keys, std::string_view name, Millis expire = Millis{0});
  ~Adder();
  Adder(const Adder&) = delete;
  Adder& operator=(const Adder&) = delete;

  /// Takes a batch; returns the results of the batches before it not yet returned (empty on
  /// the first call, and while items are gathered for a merge).
  const std::vector<ItemResult>& add(const std::vector<std::string>& items);
  /// Completes what is in flight or gathered and settles the item counts; returns the
  /// results not yet returned.
  const std::vector<ItemResult>& finish();
  /// The filter as last read (after the first add()): why it is full, when items were refused.
  const Meta& meta() const { return meta_; }

 private:
  struct Grant {
    bool valid = false;
    std::int64_t status = 0;
    std::int64_t layer = 0;
    std::int64_t granted = 0;
    std::int64_t layers = 0;
  };
  struct Batch {
    std::vector<Hash128> hashes;
    std::vector<ItemResult> results;
    bool in_flight = false;
    std::int64_t layer = 0;
    std::int64_t granted = 0;
  };

  void load();
  void refresh();
  void expire_all();
  void format_sets(const Batch& b, std::size_t begin, std::size_t end, std::int64_t layer,
                   std::string& out) const;
  std::string grant_command(std::int64_t want);
  Grant parse_grant(const Reply& r);
  Grant grant_now(std::int64_t want);
  void settle(std::int64_t layer, std::int64_t back, std::int64_t added);
  void flush_settlement();
  void complete(Batch& b);
  void slow_path(Batch& b);
  void test_layers(Batch& b, std::vector<std::size_t>& candidates, std::size_t from,
                   std::size_t to);
  bool gathering() const;
  void gather(const std::vector<std::string>& items);
  bool worth_merging() const;
  /// Whether the group goes now, while the input goes on (add).
  bool group_ready() const;
  /// The gathered items, merged (`merge`) or as BITFIELD; their results in done_.
  const std::vector<ItemResult>& run_group(bool merge);
  void drop_present(const Batch& b, std::vector<std::size_t>& items, std::size_t from,
                    std::size_t to);
  bool merge_group(Batch& b);
  /// Merges the bits of b's `items` into `layer`, where `granted` slots were taken for them;
  /// false when the server refused the transaction or BITOP (an ACL without them): nothing
  /// was changed.
  bool merge_bits(Batch& b, const std::vector<std::size_t>& items, std::size_t layer,
                  std::int64_t granted);
  Reply send_merge(const std::string& key);
  /// Answers b's `items` from the bits of layer `l` before the merge; how many were added.
  std::int64_t answer_from(Batch& b, const std::vector<std::size_t>& items, const Layer& l,
                           std::string_view before);

  Connection& conn_;
  const Keys& keys_;
  std::string name_;
  std::string meta_key_;
  Millis expire_;
  bool loaded_ = false;
  Meta meta_;
  Batch flight_;
  Batch done_;
  bool grant_in_flight_ = false;
  Grant next_grant_;
  std::int64_t settle_layer_ = -1;
  std::int64_t settle_back_ = 0;
  std::int64_t settle_added_ = 0;
  std::array<std::int64_t, 3> carried_{-1, 0, 0};  ///< settlement riding on a pipelined grant
  Args grant_keys_;  ///< the KEYS of the grant in flight, to name a key it refuses
  std::string speculative_;
  std::string out_;
  Batch group_;                  ///< items gathered for a merge
  std::size_t group_bytes_ = 0;  ///< of the items in group_
  std::string scratch_key_;      ///< exists only inside a merge's transaction
  std::string bitmap_;           ///< a group's bits, then the layer's as the answers go
  bool merge_refused_ = false;   ///< the server refused a merge: BITFIELD from then on
};

/// Tests items batch by batch, pipelined like Adder. A missing filter holds nothing.
class Tester {
 public:
  Tester(Connection& conn, const Keys& keys, std::string_view name);
  ~Tester();
  Tester(const Tester&) = delete;
  Tester& operator=(const Tester&) = delete;

  /// Takes a batch; returns the results of the batches before it not yet returned. Large
  /// tests of a small filter gather items and read its bitmaps whole, as Adder merges them.
  const std::vector<ItemResult>& test(const std::vector<std::string>& items);
  const std::vector<ItemResult>& finish();

 private:
  void load();
  void complete();
  /// BITFIELD_RO reads, pipelined: results of all but the last piece in done_.
  const std::vector<ItemResult>& test_bits(const std::vector<std::string>& items);
  bool gathering() const;
  bool worth_reading() const;
  bool group_ready() const;
  /// Reads every layer whole (GET) and answers the gathered items into done_.
  void test_group();

  Connection& conn_;
  const Keys& keys_;
  std::string name_;
  bool loaded_ = false;
  bool exists_ = false;
  Meta meta_;
  std::vector<std::string> layer_keys_;
  std::vector<std::string> flight_;
  std::vector<Hash128> hashes_;  ///< of the piece being formatted
  bool in_flight_ = false;
  std::vector<ItemResult> done_;
  std::string out_;
  std::vector<std::string> group_;  ///< items gathered for reading the bitmaps whole
  std::size_t group_bytes_ = 0;     ///< of the items in group_
};

/// Member names are the JSON fields (SPEC: capacity, error_rate, items, layers, bits,
/// hashes, bytes, fill_ratio).
struct Info {
  bool exists = false;
  std::string name;
  std::uint64_t capacity = 0;  ///< all layers together
  double error_rate = 0;       ///< as reserved
  std::int64_t items = 0;
  std::int64_t layers = 0;
  std::uint64_t bits = 0;    ///< all layers together
  std::uint32_t hashes = 0;  ///< of the newest layer (the one adds go to)
  std::uint64_t bytes = 0;   ///< memory of the bitmaps (STRLEN)
  double fill_ratio = 0;     ///< bits set / bits, all layers (BITCOUNT)
  std::uint32_t expansion = 0;
  bool nonscaling = false;
  double estimated_error_rate = 0;  ///< from the real fill of each layer
  std::int64_t expires_in_ms = -1;  ///< until the filter ends (--expire); -1: it does not
};
Info info(Connection& conn, const Keys& keys, std::string_view name);

// info() in two rounds, for reading many filters in one pipeline each round.
/// The first round: read_meta()'s TYPE and HGETALL; decode with decode_meta().
std::vector<Args> meta_commands(const Keys& keys, std::string_view name);
/// The second round for a filter whose metadata is `meta`: BITCOUNT and STRLEN of each layer,
/// then the filter's PTTL.
std::vector<Args> layer_commands(const Keys& keys, std::string_view name, const Meta& meta);
/// The filter's info from its metadata and the replies to layer_commands() (no I/O). Throws
/// Error(kServer) for error replies or replies of another shape.
Info decode_info(const Keys& keys, std::string_view name, const Meta& meta,
                 std::span<const Reply> replies);

/// The parameters layer `index` of `meta` would get; bits=0 when it may not be added (it
/// would pass kMaxBits, or kMaxLayers).
Layer next_layer(const Meta& meta, std::size_t index);

}  // namespace rcoord::bloom
