#pragma once
/// Random tokens that identify a holder, and seeds for jitter.

#include <string>

namespace rcoord {

/// 128 bits from the OS (getrandom), as 32 lowercase hex digits.
/// Throws Error(kServer) only if the OS cannot give randomness.
std::string random_token();

/// A seed for the jitter of retries, from the OS (getrandom, which never blocks for so few
/// bytes once the machine has booted; the process id and the clock if it fails). Not
/// std::random_device: building one probes the CPU (CPUID), some 20 µs in a virtual machine.
unsigned random_seed();

}  // namespace rcoord
