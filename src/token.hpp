#pragma once
/// Random tokens that identify a holder.

#include <string>

namespace rcoord {

/// 128 bits from the OS (getrandom), as 32 lowercase hex digits.
/// Throws Error(kServer) only if the OS cannot give randomness.
std::string random_token();

}  // namespace rcoord
