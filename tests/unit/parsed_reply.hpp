#pragma once
// The reply a RESP text stands for, as the decoders under test receive it from a connection.

#include <doctest/doctest.h>

#include <string>

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

}  // namespace rcoord
