#pragma once
/// MurmurHash3, x64 128-bit variant (Austin Appleby's public-domain design), the hash of
/// rcoord's Bloom filters; and MurmurHash64A, the server's for HyperLogLog items. Their output
/// is part of the data format: a filter written by one version of rcoord must be read the same
/// by the next, and registers must match the server's, so neither function ever changes.

#include <cstdint>
#include <string_view>

namespace rcoord {

struct Hash128 {
  std::uint64_t h1 = 0;  ///< the first 64-bit half (bytes 0..7 of the canonical output, LE)
  std::uint64_t h2 = 0;  ///< the second half
};

/// MurmurHash3_x64_128 of `data` with `seed`, as the reference implementation computes it
/// on a little-endian machine (and on any machine here: blocks are read as little-endian).
Hash128 murmur3_128(std::string_view data, std::uint32_t seed = 0);

/// MurmurHash64A (the same author's earlier 64-bit design), blocks read as little-endian: the
/// hash the server gives HyperLogLog items (src/hll.hpp), so it never changes either.
std::uint64_t murmur64a(std::string_view data, std::uint64_t seed);

}  // namespace rcoord
