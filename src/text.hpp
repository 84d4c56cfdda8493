#pragma once
/// Text helpers for output: the one escaping scheme of names and values in text output and
/// messages, UTF-8 validity and base64 for JSON, and the glob matching of `ls`.

#include <string>
#include <string_view>

namespace rcoord {

/// A name or value as text output and messages show it, so that it stays on one line and
/// cannot drive the terminal: a backslash becomes `\\`, a newline `\n`, a carriage return
/// `\r`, a tab `\t`, and every other control byte (0x00-0x1f, 0x7f) `\xHH`. Other bytes,
/// UTF-8 included, are kept as they are.
std::string escape_text(std::string_view text);

/// A value as a `field=value` of text output shows it when it must not pass for more than one
/// value: escape_text(), then in double quotes with each double quote inside written `\"`.
std::string quote_text(std::string_view text);

/// Whether the JSON printer prints `bytes` unchanged (valid UTF-8); when not, it replaces
/// the bad bytes with U+FFFD and a `*_base64` field carries the exact bytes.
bool valid_utf8(std::string_view bytes);

/// Standard base64 (RFC 4648, with padding).
std::string base64(std::string_view bytes);

/// Redis's glob matching (as SCAN MATCH and KEYS use it): `*` any run of bytes, `?` one
/// byte, `[abc]`, `[^a-z]` classes, `\x` the byte x itself. Matches the whole of `text`.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace rcoord
