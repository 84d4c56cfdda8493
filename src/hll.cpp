#include "hll.hpp"

#include <bit>

#include "murmur3.hpp"

namespace rcoord::hll {
namespace {

constexpr std::uint64_t kSeed = 0xadc83b19ULL;  // the server's, for HyperLogLog items
constexpr int kIndexBits = 14;
constexpr int kRegisterBits = 6;

}  // namespace

void Registers::add(std::string_view item) {
  std::uint64_t hash = murmur64a(item, kSeed);
  std::size_t index = hash & (kRegisters - 1);
  // The run of zeros above the index bits, counted with its closing 1; the bit set at 50
  // bounds it as the server does (at most 51).
  std::uint64_t rest = (hash >> kIndexBits) | (std::uint64_t{1} << (64 - kIndexBits));
  auto run = static_cast<std::uint8_t>(std::countr_zero(rest) + 1);
  if (run > registers_[index]) registers_[index] = run;
}

std::string Registers::dense() const {
  std::string out(kDenseBytes, '\0');
  out.replace(0, 4, "HYLL");                        // byte 4, the encoding, stays 0: dense
  out[kHeaderBytes - 1] = static_cast<char>(0x80);  // the cached count is stale
  auto* bytes = reinterpret_cast<unsigned char*>(out.data() + kHeaderBytes);
  for (std::size_t i = 0; i < kRegisters; ++i) {
    unsigned value = registers_[i];
    if (value == 0) continue;
    std::size_t bit = i * kRegisterBits;
    std::size_t byte = bit / 8;
    unsigned shift = bit % 8;
    bytes[byte] = static_cast<unsigned char>(bytes[byte] | (value << shift));
    if (shift + kRegisterBits > 8) {
      bytes[byte + 1] = static_cast<unsigned char>(bytes[byte + 1] | (value >> (8 - shift)));
    }
  }
  return out;
}

bool decode_dense(std::string_view hll, std::array<std::uint8_t, kRegisters>& out) {
  if (hll.size() != kDenseBytes || hll.substr(0, 4) != "HYLL" || hll[4] != 0) return false;
  const auto* bytes = reinterpret_cast<const unsigned char*>(hll.data() + kHeaderBytes);
  for (std::size_t i = 0; i < kRegisters; ++i) {
    std::size_t bit = i * kRegisterBits;
    std::size_t byte = bit / 8;
    unsigned shift = bit % 8;
    unsigned value = bytes[byte] >> shift;
    if (shift + kRegisterBits > 8) value |= static_cast<unsigned>(bytes[byte + 1]) << (8 - shift);
    out[i] = static_cast<std::uint8_t>(value & 63u);
  }
  return true;
}

}  // namespace rcoord::hll
