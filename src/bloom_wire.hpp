#pragma once
/// The wire work the bloom filter's adder and tester share (no public API of bloom.hpp):
/// its layers' keys, BITFIELD commands streamed in RESP form and their replies, and whole
/// layers read as bitmaps.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bloom.hpp"
#include "connection.hpp"
#include "keys.hpp"
#include "murmur3.hpp"

namespace rcoord::bloom {

// Bit reads in one pipelined write of tests. A batch of items against one layer stays one
// write; against a filter of many layers (up to 64, each with more hashes than the last) a
// whole batch would be tens of megabytes, more than a busy server reads within --timeout,
// so it goes out in pieces of about this many reads.
inline constexpr std::size_t kMaxReadsPerWrite = std::size_t{1} << 17;

/// How many items whose bits are read in layers [from, to) of `layers` go in one write.
std::size_t items_per_write(const std::vector<Layer>& layers, std::size_t from, std::size_t to);

/// `v` as a bulk string of its decimal digits, without a temporary string.
void append_uint(std::string& out, std::uint64_t v);

/// `*N\r\n$8\r\nBITFIELD\r\n$len\r\nkey\r\n` for `ops` operations (SET u1 POS 1, or
/// GET u1 POS for BITFIELD_RO).
void append_header(std::string& out, std::string_view verb, std::string_view key,
                   std::uint32_t ops);

/// A BITFIELD reply is an array of as many bits as the command read or set; anything else is
/// the server refusing it (another type at the key) or not a reply to it: Error(kServer),
/// and `conn` is closed (the rest of the stream's replies are still on the way).
void check_bitfield_reply(Connection& conn, const Reply& r, std::string_view key, std::size_t bits);

/// `count` items' bits in one layer, kItemsPerBitfield items to a BITFIELD (`set`: SET u1 POS
/// 1 for adds) or BITFIELD_RO (GET u1 POS for tests); hash_of(i) is item i's hash.
template <typename HashOf>
void append_bitfields(std::string& out, bool set, std::string_view key, const Layer& l,
                      std::size_t count, HashOf hash_of) {
  for (std::size_t first = 0; first < count; first += kItemsPerBitfield) {
    std::size_t last = std::min(count, first + kItemsPerBitfield);
    append_header(out, set ? "BITFIELD" : "BITFIELD_RO", key,
                  l.hashes * static_cast<std::uint32_t>(last - first));
    for (std::size_t i = first; i < last; ++i) {
      for_each_position(hash_of(i), l.bits, l.hashes, [&](std::uint64_t pos) {
        out += set ? "$3\r\nSET\r\n$2\r\nu1\r\n" : "$3\r\nGET\r\n$2\r\nu1\r\n";
        append_uint(out, pos);
        if (set) out += "$1\r\n1\r\n";
      });
    }
  }
}

/// Reads the replies to append_bitfields(count) and calls seen(i, all_ones) for each item:
/// whether all of item i's bits were 1 before (set) or are 1 (get).
template <typename Seen>
void read_bitfields(Connection& conn, std::string_view key, const Layer& l, std::size_t count,
                    Seen seen) {
  for (std::size_t first = 0; first < count; first += kItemsPerBitfield) {
    std::size_t last = std::min(count, first + kItemsPerBitfield);
    Reply r = conn.receive();
    check_bitfield_reply(conn, r, key, l.hashes * (last - first));
    for (std::size_t i = first; i < last; ++i) {
      seen(i, bits_all_ones(r.get(), (i - first) * l.hashes, l.hashes));
    }
  }
}

// --- whole layers, for gathered adds and tests ---------------------------------------------

std::size_t bitmap_bytes(const Layer& l);

/// Bit `pos` of a bitmap as SETBIT counts: bit 0 is the most significant bit of byte 0. Bits
/// past the end of the string are 0 (a layer GET read shorter, or missing).
bool bit_at(std::string_view bitmap, std::uint64_t pos);
void set_bit(std::string& bitmap, std::uint64_t pos);

std::size_t total_bytes(const std::vector<Layer>& layers);
std::size_t total_hashes(const std::vector<Layer>& layers);

/// Whether every bit of the item with hash `h` is set in `bitmap`, a layer `l` as GET read it
/// (a missing layer holds nothing).
bool all_bits_set(const redisReply* bitmap, const Hash128& h, const Layer& l);

/// The layers at `keys`, read whole (GET, pipelined); one that holds another type is refused.
std::vector<Reply> read_layers(Connection& conn, const std::vector<std::string>& keys);

}  // namespace rcoord::bloom
