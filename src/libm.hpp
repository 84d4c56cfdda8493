#pragma once
/// The few functions of the C math library rcoord needs, without linking libm.
///
/// A dynamically linked libm costs every start about 70 µs on our benchmark machine (the
/// loader maps it, relocates it and runs its resolvers), a tenth of a process start, yet only
/// a Bloom filter's sizing and its estimated error rate use it. So libm is loaded with dlopen
/// the first time one of those needs it, and the rounding rcoord does elsewhere is done here.
/// In the fully static binary (RCOORD_STATIC, the default) they are linked in and called
/// directly.

#include <cmath>

namespace rcoord::libm {

/// libm's log2, log1p and pow, loaded on first use (dynamic builds). They throw Error(kServer)
/// when the C library's libm cannot be loaded.
double log2(double x);
double log1p(double x);
double pow(double x, double y);

/// round(x) (halves away from zero), the same value for every double, without libm:
/// x - floor(x) is exact, and floor compiles to inline instructions.
inline double round(double x) {
  double magnitude = std::fabs(x);
  double whole = std::floor(magnitude);
  if (magnitude - whole >= 0.5) whole += 1.0;
  return std::copysign(whole, x);
}

}  // namespace rcoord::libm
