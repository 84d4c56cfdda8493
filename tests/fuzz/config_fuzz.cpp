// parse_config on arbitrary text: bad text is Error(kUsage) naming the file, never a crash.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rcoord;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_errors({kUsage}, [&] {
    ConfigValues values = parse_config(text, "fuzz.toml");
    // `key = []` is a key with no values (its readers treat it as unset).
    for (const auto& entry : values)
      fuzz::require(!entry.first.empty(), "a config key is not empty");
  });
  return 0;
}
