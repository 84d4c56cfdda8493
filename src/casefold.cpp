#include "casefold.hpp"

#include <algorithm>
#include <iterator>

namespace rcoord {
namespace {

struct Run {
  char32_t first;
  char32_t last;
  std::int32_t delta;
  std::uint8_t stride;
};

constexpr Run kRuns[] = {
#include "casefold_table.inc"
};

// Decodes one UTF-8 sequence at `s[i]`; returns its length, 0 when it is not valid UTF-8
// (overlong forms, surrogates and values past U+10FFFF are not valid).
std::size_t decode(std::string_view s, std::size_t i, char32_t& out) {
  auto byte = [&](std::size_t j) { return static_cast<unsigned char>(s[j]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    out = b0;
    return 1;
  }
  std::size_t len = 0;
  char32_t c = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    c = b0 & 0x1Fu;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    c = b0 & 0x0Fu;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    c = b0 & 0x07u;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t j = 1; j < len; ++j) {
    if ((byte(i + j) & 0xC0) != 0x80) return 0;
    c = (c << 6) | (byte(i + j) & 0x3Fu);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  out = c;
  return len;
}

void encode(char32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace

char32_t fold_code_point(char32_t c) {
  if (c < 0x41) return c;
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  // The last run whose first code point is <= c.
  const Run* it = std::upper_bound(std::begin(kRuns), std::end(kRuns), c,
                                   [](char32_t v, const Run& r) { return v < r.first; });
  if (it == std::begin(kRuns)) return c;
  const Run& r = *std::prev(it);
  if (c > r.last || (c - r.first) % r.stride != 0) return c;
  return static_cast<char32_t>(static_cast<std::int64_t>(c) + r.delta);
}

std::string fold_case(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    char32_t c = 0;
    std::size_t len = decode(text, i, c);
    if (len == 0) {
      out += text[i];  // not UTF-8: keep the byte
      ++i;
      continue;
    }
    if (len == 1) {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    } else {
      encode(fold_code_point(c), out);
    }
    i += len;
  }
  return out;
}

}  // namespace rcoord
