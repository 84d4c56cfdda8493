#include "text.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace rcoord {
namespace {

unsigned char byte_of(char c) { return static_cast<unsigned char>(c); }

bool needs_escape(char c) {
  unsigned char b = byte_of(c);
  return c == '\\' || b < 0x20 || b == 0x7f;
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

// The JSON printer's own verdict, so "valid" means exactly what it prints unchanged.
bool valid_utf8(std::string_view bytes) {
  try {
    (void)nlohmann::ordered_json(std::string(bytes)).dump();
    return true;
  } catch (const nlohmann::ordered_json::type_error&) {
    return false;
  }
}

}  // namespace rcoord
