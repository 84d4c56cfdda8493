#pragma once
// Shared by the fuzz targets: the one property every parser and decoder must keep is that
// bad input ends in an rcoord::Error of the documented kind, never in a crash, undefined
// behaviour or another exception.

#include <cstdio>
#include <cstdlib>

#include "errors.hpp"

namespace rcoord::fuzz {

/// Runs `fn`; an Error whose code is not one of `allowed` aborts, so the fuzzer reports it.
/// Any other exception escapes and aborts too.
template <typename Fn>
void expect_errors(std::initializer_list<Exit> allowed, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    for (Exit code : allowed) {
      if (e.code() == code) return;
    }
    std::fprintf(stderr, "unexpected error kind %d: %s\n", static_cast<int>(e.code()), e.what());
    std::abort();
  }
}

/// Aborts with `what` when `ok` is false: a broken invariant the fuzzer should keep.
inline void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

}  // namespace rcoord::fuzz
