// Gates without a server: the parts' parsing (--sem, --rate), their global order and the
// usage errors, and the printer's views of a take (the JSON fields of SPEC §6).

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "errors.hpp"
#include "gate_command.hpp"

namespace {

using rcoord::gate::Kind;
using rcoord::gate::Part;

template <typename T>
std::string gate_json_of(const T& r) {
  nlohmann::ordered_json j;
  to_json(j, r);
  return j.dump();
}

int usage_code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const rcoord::Error& e) {
    return e.code();
  }
  return 0;
}

}  // namespace

TEST_CASE("gate --sem: NAME:LIMIT[:PERMITS], permits 1 by default") {
  Part p = rcoord::gate::parse_sem("encoders:4");
  CHECK(p.kind == Kind::kSem);
  CHECK(p.name == "encoders");
  CHECK(p.limit == 4);
  CHECK(p.permits == 1);
  p = rcoord::gate::parse_sem("encoders:4:2");
  CHECK(p.limit == 4);
  CHECK(p.permits == 2);
  p = rcoord::gate::parse_sem("a:b:3");  // a name with a colon, then the limit
  CHECK(p.name == "a:b");
  CHECK(p.limit == 3);
  for (const char* bad : {"x", "x:", ":2", "x:0", "x:two", "x:2:3", "x:2:0", "x:-1"}) {
    CAPTURE(bad);
    CHECK(usage_code_of([&] { rcoord::gate::parse_sem(bad); }) == rcoord::kUsage);
  }
}

TEST_CASE("gate --rate: NAME:RATE as limit check takes it") {
  Part p = rcoord::gate::parse_rate("api:10/s");
  CHECK(p.kind == Kind::kRate);
  CHECK(p.name == "api");
  CHECK(p.rate.count == 10);
  CHECK(p.rate.period == rcoord::Millis(1000));
  CHECK(p.rate_text == "10/s");
  for (const char* bad : {"api", "api:10", ":10/s", "api:ten/s", "api:0/s", "api:10/x"}) {
    CAPTURE(bad);
    CHECK(usage_code_of([&] { rcoord::gate::parse_rate(bad); }) == rcoord::kUsage);
  }
}

TEST_CASE("gate parts: one global order by type then name, usage errors for none or a name twice") {
  std::vector<Part> parts{rcoord::gate::parse_rate("r:1/s"),
                          rcoord::gate::parse_sem("s:2"),
                          {Kind::kSharedLock, "m"},
                          {Kind::kLock, "z"},
                          {Kind::kLock, "b"}};
  rcoord::gate::order(parts);
  std::vector<std::string> names;
  for (const auto& p : parts) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"b", "z", "m", "s", "r"});

  std::vector<Part> none;
  CHECK(usage_code_of([&] { rcoord::gate::order(none); }) == rcoord::kUsage);
  std::vector<Part> twice{{Kind::kLock, "a"}, {Kind::kSharedLock, "a"}};
  CHECK(usage_code_of([&] { rcoord::gate::order(twice); }) == rcoord::kUsage);
  std::vector<Part> sems{rcoord::gate::parse_sem("p:2"), rcoord::gate::parse_sem("p:3")};
  CHECK(usage_code_of([&] { rcoord::gate::order(sems); }) == rcoord::kUsage);
  // the same name for objects of different types is no conflict
  std::vector<Part> types{
      {Kind::kLock, "x"}, rcoord::gate::parse_sem("x:2"), rcoord::gate::parse_rate("x:1/s")};
  CHECK_NOTHROW(rcoord::gate::order(types));
}

TEST_CASE("gate acquire: JSON per part, the token as text, a refusal names the part") {
  rcoord::gate::Taken t;
  t.acquired = true;
  t.token = "tok";
  t.ttl_ms = 30000;
  t.waited_ms = 5;
  rcoord::gate::PartTaken lock{{Kind::kLock, "a"}};
  lock.acquired = true;
  lock.fence = 7;
  rcoord::gate::PartTaken sem{rcoord::gate::parse_sem("s:3:2")};
  sem.acquired = true;
  sem.holders = 1;
  sem.in_use = 2;
  rcoord::gate::PartTaken rate{rcoord::gate::parse_rate("r:10/s")};
  rate.acquired = true;
  rate.remaining = 9;
  t.parts = {lock, sem, rate};
  CHECK(gate_json_of(t) ==
        R"({"acquired":true,"token":"tok","ttl_ms":30000,"waited_ms":5,"parts":[)"
        R"({"type":"lock","name":"a","fence":7},)"
        R"({"type":"sem","name":"s","limit":3,"permits":2,"holders":1,"in_use":2},)"
        R"({"type":"rate","name":"r","remaining":9}]})");
  CHECK(to_text(t) == "tok");

  rcoord::gate::Taken no;
  rcoord::gate::PartTaken busy{{Kind::kLock, "b"}};
  busy.ttl_ms = 900;
  no.parts = {busy};
  CHECK(gate_json_of(no) ==
        R"({"acquired":false,"waited_ms":0,"refused":{"type":"lock","name":"b","acquired":false,)"
        R"("ttl_ms":900},"parts":[{"type":"lock","name":"b","acquired":false,"ttl_ms":900}]})");
  CHECK(to_text(no).empty());
}
