#include "bloom_wire.hpp"

#include <fmt/format.h>

#include <charconv>

#include "errors.hpp"
#include "reply.hpp"

namespace rcoord::bloom {
namespace {

[[noreturn]] void reply_failed(Connection& conn, const redisReply* r, std::string_view key) {
  std::string msg(r->str, r->len);
  conn.close();  // replies of the rest of the batch are still on the way
  if (msg.rfind("WRONGTYPE", 0) == 0) {
    throw foreign_key_error(key, "another type than the string of a bloom filter's layer");
  }
  throw Error(kServer, fmt::format("BITFIELD on {} failed: {}", key, msg));
}

}  // namespace

std::size_t items_per_write(const std::vector<Layer>& layers, std::size_t from, std::size_t to) {
  std::size_t reads = 0;
  for (std::size_t i = from; i < to; ++i) reads += layers[i].hashes;
  return std::max<std::size_t>(1, kMaxReadsPerWrite / std::max<std::size_t>(1, reads));
}

void append_uint(std::string& out, std::uint64_t v) {
  char digits[24];
  char* end = std::to_chars(digits, digits + sizeof(digits), v).ptr;
  append_bulk(out, {digits, static_cast<std::size_t>(end - digits)});
}

void append_header(std::string& out, std::string_view verb, std::string_view key,
                   std::uint32_t ops) {
  std::uint64_t per_op = verb == "BITFIELD" ? 4 : 3;
  append_array_header(out, 2 + per_op * ops);
  append_bulk(out, verb);
  append_bulk(out, key);
}

void check_bitfield_reply(Connection& conn, const Reply& r, std::string_view key,
                          std::size_t bits) {
  if (r->type == REDIS_REPLY_ERROR) reply_failed(conn, r.get(), key);
  if (r->type != REDIS_REPLY_ARRAY || r->elements != bits) {
    conn.close();
    throw Error(kServer, fmt::format("unexpected reply to BITFIELD on {}", key));
  }
}

std::size_t bitmap_bytes(const Layer& l) { return static_cast<std::size_t>((l.bits + 7) / 8); }

// Bit `pos` of a bitmap as SETBIT counts: bit 0 is the most significant bit of byte 0. Bits
// past the end of the string are 0 (a layer GET read shorter, or missing).
bool bit_at(std::string_view bitmap, std::uint64_t pos) {
  return pos / 8 < bitmap.size() &&
         (static_cast<unsigned char>(bitmap[pos / 8]) & (0x80u >> (pos % 8))) != 0;
}
void set_bit(std::string& bitmap, std::uint64_t pos) {
  bitmap[pos / 8] =
      static_cast<char>(static_cast<unsigned char>(bitmap[pos / 8]) | (0x80u >> (pos % 8)));
}

std::size_t total_bytes(const std::vector<Layer>& layers) {
  std::size_t bytes = 0;
  for (const auto& l : layers) bytes += bitmap_bytes(l);
  return bytes;
}

std::size_t total_hashes(const std::vector<Layer>& layers) {
  std::size_t hashes = 0;
  for (const auto& l : layers) hashes += l.hashes;
  return hashes;
}

// Whether every bit of the item with hash `h` is set in `bitmap`, a layer `l` as GET read it
// (a missing layer holds nothing).
bool all_bits_set(const redisReply* bitmap, const Hash128& h, const Layer& l) {
  if (bitmap->type != REDIS_REPLY_STRING) return false;
  std::string_view bits(bitmap->str, bitmap->len);
  bool all_set = true;
  for_each_position(h, l.bits, l.hashes, [&](std::uint64_t pos) {
    if (!bit_at(bits, pos)) all_set = false;
  });
  return all_set;
}

// The layers at `keys`, read whole (GET, pipelined); one that holds another type is refused.
std::vector<Reply> read_layers(Connection& conn, const std::vector<std::string>& keys) {
  std::vector<Args> gets;
  gets.reserve(keys.size());
  for (const auto& key : keys) gets.push_back({"GET", key});
  std::vector<Reply> bitmaps = conn.pipeline(gets);
  for (std::size_t i = 0; i < bitmaps.size(); ++i) {
    if (bitmaps[i]->type == REDIS_REPLY_ERROR) {
      throw foreign_key_error(keys[i], "another type than the string of a bloom filter's layer");
    }
  }
  return bitmaps;
}

}  // namespace rcoord::bloom
