// The printers' views of election, signal and latch results: the JSON fields of SPEC §3 and
// text made to be captured.

#include <doctest/doctest.h>

#include <string>

#include "elect_command.hpp"
#include "signal_command.hpp"

namespace {
template <typename T>
std::string json_of(const T& r) {
  nlohmann::ordered_json j;
  to_json(j, r);
  return j.dump();
}
}  // namespace

TEST_CASE("elect campaign: JSON fields of SPEC, the term as text") {
  rcoord::elect::Campaign won{true, "svc", "a", 4, 10000, 3, "a"};
  CHECK(json_of(won) ==
        R"({"leader":true,"name":"svc","id":"a","term":4,"ttl_ms":10000,"waited_ms":3})");
  CHECK(to_text(won) == "4");  // TERM=$(rcoord elect campaign svc --id a)
  rcoord::elect::Campaign lost{false, "svc", "b", 4, 8000, 0, "a"};
  CHECK(
      json_of(lost) ==
      R"({"leader":false,"name":"svc","id":"b","term":4,"ttl_ms":8000,"waited_ms":0,"leader_id":"a"})");
  CHECK(to_text(lost).empty());
}

TEST_CASE("elect status and observe") {
  rcoord::elect::Status s{true, "svc", "a", 4, 900};
  CHECK(to_text(s) == "leader: true\nname: svc\nid: a\nterm: 4\nttl_ms: 900\n");
  CHECK(json_of(s) == R"({"leader":true,"name":"svc","id":"a","term":4,"ttl_ms":900})");
  CHECK(to_text(rcoord::elect::Change{s}) == "a\n");
  rcoord::elect::Status none{false, "svc", "", 4, 0};
  CHECK(to_text(rcoord::elect::Change{none}) == "\n");  // an empty line: nobody leads
  CHECK(json_of(rcoord::elect::Change{none}) ==
        R"({"leader":false,"name":"svc","id":"","term":4,"ttl_ms":0})");
  rcoord::elect::Resigned r{true, "svc", "a", 4};
  CHECK(json_of(r) == R"({"resigned":true,"name":"svc","id":"a","term":4})");
  CHECK(to_text(r) == "resigned");
}

TEST_CASE("signal send and wait") {
  rcoord::signaling::Sent sent{"ch", 3};
  CHECK(json_of(sent) == R"({"name":"ch","channel":"ch","receivers":3})");
  CHECK(to_text(sent) == "3");
  rcoord::signaling::Received got{true, "ch", "hello"};
  CHECK(json_of(got) == R"({"received":true,"name":"ch","channel":"ch","data":"hello"})");
  CHECK(to_text(got) == "hello\n");
  rcoord::signaling::Received empty{true, "ch", ""};
  CHECK(to_text(empty) == "\n");  // an empty message is still one line
  rcoord::signaling::Received none{false, "ch", ""};
  CHECK(json_of(none) == R"({"received":false,"name":"ch","channel":"ch"})");
}

TEST_CASE("latch views: down prints the count left, status name and count") {
  rcoord::latch::Counted left{true, "ci", 7};
  CHECK(to_text(left) == "7");
  CHECK(json_of(left) == R"({"name":"ci","count":7})");
  rcoord::latch::Counted missing{false, "ci", 0};
  CHECK(to_text(missing).empty());
  CHECK(json_of(missing) == R"({"name":"ci","count":null})");
  rcoord::latch::StatusView st{{true, "ci", 2}};
  CHECK(to_text(st) == "name: ci\ncount: 2\n");
  CHECK(json_of(st) == R"({"name":"ci","count":2})");
  rcoord::latch::Initialized in{true, "ci", 10};
  CHECK(json_of(in) == R"({"created":true,"name":"ci","count":10})");
  CHECK(to_text(in) == "10");
  rcoord::latch::Waited w{true, "ci", 0, 12};
  CHECK(json_of(w) == R"({"open":true,"name":"ci","count":0,"waited_ms":12})");
  CHECK(to_text(w).empty());
}
