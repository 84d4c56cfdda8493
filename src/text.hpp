#pragma once
/// Text helpers for output: the one escaping scheme of names and values in text output, and
/// UTF-8 validity.

#include <string>
#include <string_view>

namespace rcoord {

/// A name or value as text output and messages show it, so that it stays on one line and
/// cannot drive the terminal: a backslash becomes `\\`, a newline `\n`, a carriage return
/// `\r`, a tab `\t`, and every other control byte (0x00-0x1f, 0x7f) `\xHH`. Other bytes,
/// UTF-8 included, are kept as they are.
std::string escape_text(std::string_view text);

/// Whether the JSON printer prints `bytes` unchanged (valid UTF-8); when not, it replaces
/// the bad bytes with U+FFFD.
bool valid_utf8(std::string_view bytes);

}  // namespace rcoord
