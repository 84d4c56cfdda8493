// parse_url and mask_url on arbitrary text: a bad URL is Error(kUsage), and the masked form
// of a URL with a password (what error messages and doctor print) names the same endpoint
// with the password, wherever it was given, replaced by **** (and a user name that is also
// the password hidden with it).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "url.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rcoord;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string masked = mask_url(text);
  fuzz::expect_errors({kUsage}, [&] {
    Endpoint e = parse_url(text);
    fuzz::require(e.port > 0 && e.port <= 65535, "a parsed port fits 16 bits");
    fuzz::require(e.db >= 0, "a parsed db is not negative");
    if (!e.password || e.password->empty()) return;
    Endpoint m;
    try {
      m = parse_url(masked);
    } catch (const Error&) {
      fuzz::require(false, "the masked form of a good URL parses");
    }
    fuzz::require(m.password == "****", "mask_url replaces the whole password");
    // A user name that is also the password is hidden with it.
    bool user_kept = m.user == e.user || e.user == *e.password;
    fuzz::require(m.host == e.host && m.port == e.port && m.db == e.db && user_kept &&
                      m.socket_path == e.socket_path && m.tls == e.tls,
                  "mask_url keeps the endpoint");
  });
  return 0;
}
