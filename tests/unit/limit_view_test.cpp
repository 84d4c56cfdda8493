// The printers' views of a decision over several rates (SPEC §5, "several rates at once"):
// the whole answer's fields, then `rates` with one object (text: one line) per rate.

#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "limit_command.hpp"
#include "output.hpp"

using namespace std::chrono_literals;
using rcoord::Rate;
namespace limit = rcoord::limit;

namespace {

limit::MultiDecision denied_by_hourly() {
  limit::MultiDecision d;
  d.rates = {{Rate{5, 1min}, {true, 5, 3, 0, 24'000}},
             {Rate{2, 1h}, {false, 2, 0, 1'800'000, 3'600'000}}};
  d.decision = {false, 2, 0, 1'800'000, 3'600'000};
  return d;
}

template <typename T>
std::string json_of(const T& r) {
  nlohmann::ordered_json j;
  to_json(j, r);
  return rcoord::dump_json(j);
}

}  // namespace

TEST_CASE("several rates: JSON adds `rates`, each with its rate and its own fields") {
  CHECK(
      json_of(denied_by_hourly()) ==
      R"({"allowed":false,"limit":2,"remaining":0,"retry_after_ms":1800000,)"
      R"("reset_after_ms":3600000,"rates":[)"
      R"({"rate":"5/m","allowed":true,"limit":5,"remaining":3,"retry_after_ms":0,"reset_after_ms":24000},)"
      R"({"rate":"2/h","allowed":false,"limit":2,"remaining":0,"retry_after_ms":1800000,"reset_after_ms":3600000}]})");
  limit::MultiWaited w{denied_by_hourly(), 12};
  CHECK(json_of(w).find(R"("reset_after_ms":3600000,"waited_ms":12,"rates":[{"rate":"5/m")") !=
        std::string::npos);
}

TEST_CASE("several rates: text is the whole answer's lines, then one line per rate") {
  CHECK(to_text(denied_by_hourly()) ==
        "allowed: false\nlimit: 2\nremaining: 0\nretry_after_ms: 1800000\n"
        "reset_after_ms: 3600000\n"
        "rate: 5/m allowed=true limit=5 remaining=3 retry_after_ms=0 reset_after_ms=24000\n"
        "rate: 2/h allowed=false limit=2 remaining=0 retry_after_ms=1800000 "
        "reset_after_ms=3600000\n");
}

TEST_CASE("rates are written as the options take them") {
  CHECK(limit::rate_text(Rate{10, 1s}) == "10/s");
  CHECK(limit::rate_text(Rate{100, 1min}) == "100/m");
  CHECK(limit::rate_text(Rate{1000, 1h}) == "1000/h");
  CHECK(limit::rate_text(Rate{100, 10s}) == "100/10s");
  CHECK(limit::rate_text(Rate{5, 250ms}) == "5/250ms");
}
