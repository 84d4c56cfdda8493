#pragma once
// What the decoders' tests share: the reply a RESP text stands for, as a decoder receives it
// from a connection, and the exit code a call throws with.

#include <doctest/doctest.h>

#include <string>

#include "errors.hpp"
#include "reply.hpp"

namespace rcoord {

inline Reply parse(const std::string& resp) {
  ReplyParser parser;
  parser.feed(resp);
  Reply r;
  REQUIRE(parser.next(r));
  REQUIRE(r != nullptr);
  return r;
}

/// The code of the Error `fn` throws; kYes when it throws none.
template <typename Fn>
Exit error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  return kYes;
}

}  // namespace rcoord
