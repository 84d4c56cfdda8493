// The duration, wait and rate parsers on arbitrary text, and the limit parameters derived
// from a parsed rate: bad text is nullopt or Error(kUsage), a parsed duration prints back to
// itself, and no arithmetic overflows (UBSan).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "duration.hpp"
#include "fuzz_support.hpp"
#include "limit.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rcoord;
  std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto d = parse_duration(text)) {
    fuzz::require(d->count() >= 0, "a duration is not negative");
    auto again = parse_duration(format_duration(*d));
    fuzz::require(again && *again == *d, "format_duration prints a duration back exactly");
  }
  if (auto w = parse_wait(text); w && *w != Millis::max()) {
    fuzz::require(w->count() >= 0, "a wait is not negative");
  }
  fuzz::expect_errors({kUsage}, [&] { duration_or_throw("--ttl", text); });
  fuzz::expect_errors({kUsage}, [&] { wait_or_throw("--wait", text); });

  if (auto rate = parse_rate(text)) {
    using limit::Algo;
    for (Algo algo : {Algo::kGcra, Algo::kTokenBucket, Algo::kSlidingWindow, Algo::kFixedWindow}) {
      fuzz::expect_errors({kUsage}, [&] {
        limit::Params p = limit::make_params(algo, *rate, std::nullopt, 1);
        fuzz::require(p.unit > 0 && p.drain > 0 && p.window_us > 0,
                      "limit parameters are positive");
      });
    }
  }
  fuzz::expect_errors({kUsage}, [&] { rate_or_throw("--rate", text); });
  return 0;
}
