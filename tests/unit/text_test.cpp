// The text helpers of output: escaping of names in text output and messages, `ls`'s glob
// matching, and the byte-order bound of prefix search.

#include "text.hpp"

#include <doctest/doctest.h>

#include <string>

#include "complete.hpp"

using rcoord::escape_text;
using rcoord::glob_match;

TEST_CASE("escape_text: one line, no terminal control, backslash kept unambiguous") {
  CHECK(escape_text("plain name-1.2") == "plain name-1.2");
  CHECK(escape_text("y\nheld: true") == "y\\nheld: true");
  CHECK(escape_text("a\rb\tc") == "a\\rb\\tc");
  CHECK(escape_text("back\\slash") == "back\\\\slash");
  CHECK(escape_text("\x1b[31mred") == "\\x1b[31mred");
  CHECK(escape_text(std::string("nul\0byte", 8)) == "nul\\x00byte");
  CHECK(escape_text("del\x7f") == "del\\x7f");
  CHECK(escape_text("Zürich 東京") == "Zürich 東京");  // UTF-8 as it is
  CHECK(escape_text("\xff\xfe") == "\xff\xfe");        // other bytes too
  // An escaped name never holds a newline, so it cannot forge a line.
  CHECK(escape_text("a\n\n\nb").find('\n') == std::string::npos);
}

TEST_CASE("quote_text: escaped, in double quotes, a quote inside written \\\"") {
  using rcoord::quote_text;
  CHECK(quote_text("x fence=99") == "\"x fence=99\"");
  CHECK(quote_text("say \"hi\"") == "\"say \\\"hi\\\"\"");
  CHECK(quote_text("") == "\"\"");
  CHECK(quote_text("a\nb\x1b") == "\"a\\nb\\x1b\"");
  CHECK(quote_text("back\\") == "\"back\\\\\"");
}

TEST_CASE("glob_match: Redis's glob over the whole name") {
  CHECK(glob_match("*", ""));
  CHECK(glob_match("*", "anything"));
  CHECK(glob_match("deploy-*", "deploy-web"));
  CHECK_FALSE(glob_match("deploy-*", "pre-deploy-web"));
  // The whole name: `fence` is not `a:fence`, nor `fence2`.
  CHECK(glob_match("fence", "fence"));
  CHECK_FALSE(glob_match("fence", "a:fence"));
  CHECK_FALSE(glob_match("fence", "fence2"));
  CHECK(glob_match("*fence", "a:fence"));
  CHECK(glob_match("a?c", "abc"));
  CHECK_FALSE(glob_match("a?c", "ac"));
  CHECK(glob_match("h[ae]llo", "hello"));
  CHECK_FALSE(glob_match("h[ae]llo", "hillo"));
  CHECK(glob_match("h[^e]llo", "hallo"));
  CHECK_FALSE(glob_match("h[^e]llo", "hello"));
  CHECK(glob_match("n[0-9]", "n7"));
  CHECK(glob_match("n[9-0]", "n7"));  // a reversed range, as Redis reads it
  CHECK_FALSE(glob_match("n[0-9]", "nx"));
  CHECK(glob_match("a\\*b", "a*b"));
  CHECK_FALSE(glob_match("a\\*b", "axb"));
  CHECK(glob_match("[\\]]", "]"));
  CHECK(glob_match("*a*b*c*", "xxaxxbxxcxx"));
  CHECK_FALSE(glob_match("*a*b*c*", "xxaxxcxxbxx"));
  CHECK(glob_match("**x", "yyx"));
  CHECK(glob_match("y*", "y\nheld: true"));  // `*` takes any byte
  CHECK(glob_match("{tag}*?", "{tag}*?"));
  CHECK_FALSE(glob_match("", "a"));
  CHECK(glob_match("", ""));
}

TEST_CASE("lex_upper_bound: the end of a prefix's range in byte order, 0xFF included") {
  using rcoord::complete::lex_upper_bound;
  CHECK(lex_upper_bound("app") == "(apq");
  CHECK(lex_upper_bound("a\xff") == "(b");
  CHECK(lex_upper_bound("\xff") == "+");
  CHECK(lex_upper_bound("\xff\xff") == "+");
  CHECK(lex_upper_bound("") == "+");
  CHECK(lex_upper_bound("\xfe\xff") == "(\xff");
  // Every string with the prefix sorts below the bound, in byte order.
  for (const char* prefix : {"a", "a\xff", "\xfe"}) {
    std::string bound = lex_upper_bound(prefix).substr(1);
    for (const char* tail : {"", "\xff\xff\xff", "zzz"}) {
      CHECK(std::string(prefix) + tail < bound);
    }
  }
}

TEST_CASE("valid_utf8 and base64, as the JSON views use them") {
  CHECK(rcoord::valid_utf8("Zürich"));
  CHECK(rcoord::valid_utf8(std::string("a\0b", 3)));  // JSON escapes NUL: still exact
  CHECK_FALSE(rcoord::valid_utf8("\xff\xfe"));
  CHECK(rcoord::base64("\xff\xfe") == "//4=");
}
