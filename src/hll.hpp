#pragma once
/// The registers of a Redis HyperLogLog, computed on the client: the same hash, register index
/// and run length as the server's PFADD (MurmurHash64A with seed 0xadc83b19, 2^14 registers of
/// 6 bits), written as a dense HyperLogLog string that PFMERGE accepts. A large `pf add` hashes
/// its items here and sends 12 KiB of registers instead of the items themselves.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace rcoord::hll {

constexpr std::size_t kRegisters = std::size_t{1} << 14;
/// Bytes of a dense HyperLogLog: a 16-byte header ("HYLL", encoding, cached count), then the
/// registers, 6 bits each.
constexpr std::size_t kHeaderBytes = 16;
constexpr std::size_t kDenseBytes = kHeaderBytes + (kRegisters * 6 + 7) / 8;

class Registers {
 public:
  /// Raises the register `item` hashes to, as PFADD does on the server.
  void add(std::string_view item);
  void clear() { registers_.fill(0); }
  std::uint8_t operator[](std::size_t i) const { return registers_[i]; }
  /// The registers as a dense HyperLogLog (its cached count marked stale).
  std::string dense() const;

 private:
  std::array<std::uint8_t, kRegisters> registers_{};
};

/// The register values of a dense HyperLogLog string `hll` (for tests: what the server kept);
/// false when `hll` is not one.
bool decode_dense(std::string_view hll, std::array<std::uint8_t, kRegisters>& out);

}  // namespace rcoord::hll
