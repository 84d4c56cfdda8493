#include "text.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <utility>

namespace rcoord {
namespace {

unsigned char byte_of(char c) { return static_cast<unsigned char>(c); }

bool needs_escape(char c) {
  unsigned char b = byte_of(c);
  return c == '\\' || b < 0x20 || b == 0x7f;
}

// One character class (`[...]`) of a glob, starting at pattern[p] == '['. Leaves p past its
// closing ']' (or at the end of an unterminated class, which then runs to the end, as in
// Redis) and tells whether byte c is in it.
bool class_matches(std::string_view pattern, std::size_t& p, unsigned char c) {
  ++p;
  bool negate = p < pattern.size() && pattern[p] == '^';
  if (negate) ++p;
  bool hit = false;
  while (p < pattern.size() && pattern[p] != ']') {
    if (pattern[p] == '\\' && p + 1 < pattern.size()) {
      hit = hit || byte_of(pattern[p + 1]) == c;
      p += 2;
    } else if (p + 2 < pattern.size() && pattern[p + 1] == '-') {
      unsigned char low = byte_of(pattern[p]);
      unsigned char high = byte_of(pattern[p + 2]);
      if (low > high) std::swap(low, high);
      hit = hit || (low <= c && c <= high);
      p += 3;
    } else {
      hit = hit || byte_of(pattern[p]) == c;
      ++p;
    }
  }
  if (p < pattern.size()) ++p;  // the ']'
  return hit != negate;
}

}  // namespace

std::string escape_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (!needs_escape(c)) {
      out += c;
      continue;
    }
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += fmt::format("\\x{:02x}", byte_of(c));
    }
  }
  return out;
}

std::string quote_text(std::string_view text) {
  std::string out = "\"";
  for (char c : escape_text(text)) {
    if (c == '"') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

// The JSON printer's own verdict, so "valid" means exactly what it prints unchanged.
bool valid_utf8(std::string_view bytes) {
  try {
    (void)nlohmann::ordered_json(std::string(bytes)).dump();
    return true;
  } catch (const nlohmann::ordered_json::type_error&) {
    return false;
  }
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  auto at = [&](std::size_t k) { return static_cast<std::uint32_t>(byte_of(bytes[k])); };
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    std::uint32_t v = at(i) << 16 | at(i + 1) << 8 | at(i + 2);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += kAlphabet[v >> 6 & 63];
    out += kAlphabet[v & 63];
  }
  if (i + 1 == bytes.size()) {
    std::uint32_t v = at(i) << 16;
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    std::uint32_t v = at(i) << 16 | at(i + 1) << 8;
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += kAlphabet[v >> 6 & 63];
    out += '=';
  }
  return out;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  constexpr auto kNone = std::string_view::npos;
  std::size_t p = 0;
  std::size_t t = 0;
  // Where to resume after the last `*`: the pattern after it, and the text it has eaten up to.
  std::size_t star_p = kNone;
  std::size_t star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      char c = pattern[p];
      if (c == '*') {
        star_p = ++p;
        star_t = t;
        continue;
      }
      std::size_t next = p + 1;
      bool ok = false;
      if (c == '?') {
        ok = true;
      } else if (c == '[') {
        next = p;
        ok = class_matches(pattern, next, byte_of(text[t]));
      } else if (c == '\\' && p + 1 < pattern.size()) {
        ok = pattern[p + 1] == text[t];
        next = p + 2;
      } else {
        ok = c == text[t];
      }
      if (ok) {
        p = next;
        ++t;
        continue;
      }
    }
    // A mismatch: let the last `*` eat one more byte, or fail when there is none.
    if (star_p == kNone) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace rcoord
