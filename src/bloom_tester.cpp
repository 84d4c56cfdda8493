#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "bloom.hpp"
#include "bloom_wire.hpp"
#include "errors.hpp"
#include "lua_scripts.hpp"
#include "reply.hpp"
#include "script.hpp"
#include "token.hpp"

namespace rcoord::bloom {

Tester::Tester(Connection& conn, const Keys& keys, std::string_view name)
    : conn_(conn), keys_(keys), name_(name) {
  check_name("bloom filter", name);
}

Tester::~Tester() {
  if (in_flight_) conn_.close();
}

void Tester::complete() {
  std::size_t base = done_.size();
  done_.resize(base + flight_.size());
  for (std::size_t i = 0; i < flight_.size(); ++i) done_[base + i].item = flight_[i];
  for (std::size_t layer = 0; in_flight_ && layer < meta_.layers.size(); ++layer) {
    read_bitfields(conn_, layer_keys_[layer], meta_.layers[layer], flight_.size(),
                   [&](std::size_t i, bool ones) {
                     if (ones) done_[base + i].yes = true;
                   });
  }
  in_flight_ = false;
  flight_.clear();
}

void Tester::load() {
  if (loaded_) return;
  exists_ = read_meta(conn_, keys_, name_, meta_);
  for (std::size_t i = 0; i < meta_.layers.size(); ++i) {
    layer_keys_.push_back(layer_key(keys_, name_, i));
  }
  loaded_ = true;
}

bool Tester::gathering() const {
  if (!exists_ || in_flight_) return false;
  std::size_t bytes = total_bytes(meta_.layers);
  return bytes <= kMaxMergeBytes &&
         bytes <= kMaxGatherItems * total_hashes(meta_.layers) * kMergeBytesPerBit;
}

bool Tester::worth_reading() const {
  return group_.size() * total_hashes(meta_.layers) * kMergeBytesPerBit >=
             total_bytes(meta_.layers) ||
         group_.size() >= kMaxGatherItems;
}

// As Adder's; a group of long items is read whole too (the bitmaps are small on this route).
bool Tester::group_ready() const {
  return (group_.size() >= kMinGatherItems && worth_reading()) ||
         group_.size() >= kMaxGatherItems || group_bytes_ >= kMaxGatherBytes;
}

void Tester::test_group() {
  std::vector<Reply> replies = read_layers(conn_, layer_keys_);
  for (auto& item : group_) {
    Hash128 h = murmur3_128(item);
    bool present = false;
    for (std::size_t layer = 0; !present && layer < meta_.layers.size(); ++layer) {
      present = all_bits_set(replies[layer].get(), h, meta_.layers[layer]);
    }
    done_.push_back(ItemResult{std::move(item), present, false});
  }
  group_.clear();
  group_bytes_ = 0;
}

const std::vector<ItemResult>& Tester::test(const std::vector<std::string>& items) {
  load();
  if (gathering()) {
    done_.clear();
    group_.insert(group_.end(), items.begin(), items.end());
    for (const auto& item : items) group_bytes_ += item.size();
    if (group_ready()) test_group();
    return done_;
  }
  return test_bits(items);
}

const std::vector<ItemResult>& Tester::test_bits(const std::vector<std::string>& items) {
  done_.clear();
  // Each piece goes out while the server answers the one before; the last stays in flight.
  std::size_t per_write = items_per_write(meta_.layers, 0, meta_.layers.size());
  std::size_t first = 0;
  do {
    std::size_t last = std::min(items.size(), first + per_write);
    out_.clear();
    hashes_.clear();
    for (std::size_t i = first; exists_ && i < last; ++i) hashes_.push_back(murmur3_128(items[i]));
    for (std::size_t layer = 0; !hashes_.empty() && layer < meta_.layers.size(); ++layer) {
      append_bitfields(out_, false, layer_keys_[layer], meta_.layers[layer], hashes_.size(),
                       [&](std::size_t i) { return hashes_[i]; });
    }
    complete();
    if (!out_.empty()) {
      conn_.send_formatted(out_);
      in_flight_ = true;
    }
    flight_.assign(items.begin() + static_cast<std::ptrdiff_t>(first),
                   items.begin() + static_cast<std::ptrdiff_t>(last));
    first = last;
  } while (first < items.size());
  return done_;
}

const std::vector<ItemResult>& Tester::finish() {
  done_.clear();
  if (!group_.empty() && worth_reading()) {
    test_group();
  } else if (!group_.empty()) {
    // Too few to be worth the bitmaps: BITFIELD_RO, as a small input always went.
    std::vector<std::string> rest = std::move(group_);
    group_.clear();
    group_bytes_ = 0;
    test_bits(rest);
  }
  complete();
  return done_;
}

}  // namespace rcoord::bloom
