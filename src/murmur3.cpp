#include "murmur3.hpp"

namespace rcoord {
namespace {

constexpr std::uint64_t kC1 = 0x87c37b91114253d5ULL;
constexpr std::uint64_t kC2 = 0x4cf5ad432745937fULL;

constexpr std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

constexpr std::uint64_t fmix(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

// Little-endian load of n <= 8 bytes, whatever the machine's byte order.
std::uint64_t load_le(const unsigned char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

std::uint64_t mix_k1(std::uint64_t k) { return rotl(k * kC1, 31) * kC2; }
std::uint64_t mix_k2(std::uint64_t k) { return rotl(k * kC2, 33) * kC1; }

}  // namespace

Hash128 murmur3_128(std::string_view data, std::uint32_t seed) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t len = data.size();
  const std::size_t blocks = len / 16;
  std::uint64_t h1 = seed;
  std::uint64_t h2 = seed;

  for (std::size_t i = 0; i < blocks; ++i) {
    h1 ^= mix_k1(load_le(bytes + i * 16, 8));
    h1 = rotl(h1, 27) + h2;
    h1 = h1 * 5 + 0x52dce729;
    h2 ^= mix_k2(load_le(bytes + i * 16 + 8, 8));
    h2 = rotl(h2, 31) + h1;
    h2 = h2 * 5 + 0x38495ab5;
  }

  const unsigned char* tail = bytes + blocks * 16;
  const std::size_t rest = len & 15;
  if (rest > 8) h2 ^= mix_k2(load_le(tail + 8, rest - 8));
  if (rest > 0) h1 ^= mix_k1(load_le(tail, rest > 8 ? 8 : rest));

  h1 ^= len;
  h2 ^= len;
  h1 += h2;
  h2 += h1;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 += h2;
  h2 += h1;
  return {h1, h2};
}

std::uint64_t murmur64a(std::string_view data, std::uint64_t seed) {
  constexpr std::uint64_t kMultiplier = 0xc6a4a7935bd1e995ULL;
  constexpr int kShift = 47;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t len = data.size();
  // The server multiplies the length as a C int; lengths here never exceed that.
  std::uint64_t h = seed ^ (static_cast<std::uint64_t>(len) * kMultiplier);
  const std::size_t blocks = len / 8;
  for (std::size_t i = 0; i < blocks; ++i) {
    std::uint64_t k = load_le(bytes + 8 * i, 8);
    k *= kMultiplier;
    k ^= k >> kShift;
    k *= kMultiplier;
    h ^= k;
    h *= kMultiplier;
  }
  if (std::size_t rest = len & 7; rest != 0) {
    h ^= load_le(bytes + 8 * blocks, rest);
    h *= kMultiplier;
  }
  h ^= h >> kShift;
  h *= kMultiplier;
  h ^= h >> kShift;
  return h;
}

}  // namespace rcoord
