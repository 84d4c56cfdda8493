// Bloom hashing and sizing, Unicode case folding, and the JSON/text views of bloom, pf and
// complete (SPEC §3 field names).

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bloom.hpp"
#include "bloom_command.hpp"
#include "casefold.hpp"
#include "complete.hpp"
#include "complete_command.hpp"
#include "hll.hpp"
#include "murmur3.hpp"

using rcoord::fold_case;

namespace {

std::string hex128(const rcoord::Hash128& h) { return fmt::format("{:016x}{:016x}", h.h1, h.h2); }

std::string json_of(const nlohmann::ordered_json& j) { return j.dump(); }

}  // namespace

TEST_CASE("MurmurHash3 x64-128 matches the reference outputs") {
  // Canonical outputs (h1 then h2, each as a 64-bit hex number), checked against an
  // independent implementation; every tail length 0..15 and a block boundary are covered.
  CHECK(hex128(rcoord::murmur3_128("")) == "00000000000000000000000000000000");
  CHECK(hex128(rcoord::murmur3_128("", 42)) == "f02aa77dfa1b8523d1016610da11cbb9");
  CHECK(hex128(rcoord::murmur3_128("hello")) == "cbd8a7b341bd9b025b1e906a48ae1d19");
  CHECK(hex128(rcoord::murmur3_128("hello", 42)) == "c4b8b3c960af6f082334b875b0efbc7a");
  CHECK(hex128(rcoord::murmur3_128("The quick brown fox jumps over the lazy dog")) ==
        "e34bbc7bbc071b6c7a433ca9c49a9347");
  CHECK(hex128(rcoord::murmur3_128("0123456789abcdef")) == "4be06d94cf4ad1a787c35b5c63a708da");
  CHECK(hex128(rcoord::murmur3_128("0123456789abcdefX")) == "cdebd2acb570d6f78f72119782104b27");
  CHECK(hex128(rcoord::murmur3_128("Zürich")) == "a6705382904a98647443829829a6111f");
}

namespace {

// The false-positive rate of a layer of `s` holding n items: (1 - e^(-kn/m))^k.
double layer_rate(const rcoord::bloom::Sizing& s, double n) {
  double k = s.hashes;
  return std::pow(1.0 - std::exp(-k * n / static_cast<double>(s.bits)), k);
}

}  // namespace

TEST_CASE("HyperLogLog registers: each item raises the register the server's PFADD raises") {
  // Register and value the server (Redis 7.0) set for a lone item, read back with PFDEBUG
  // TODENSE and GET: the hash, the index bits and the run length must all agree.
  struct Case {
    std::string_view item;
    std::size_t index;
    std::uint8_t run;
  };
  for (const Case& c : {Case{"", 5938, 2}, Case{"a", 12711, 2}, Case{"hello", 9216, 1},
                        Case{"0123456789abcdef", 5949, 1},
                        Case{"https://example.com/page/1", 14629, 1}, Case{"Zürich", 15078, 2}}) {
    CAPTURE(c.item);
    rcoord::hll::Registers r;
    r.add(c.item);
    std::size_t raised = 0;
    for (std::size_t i = 0; i < rcoord::hll::kRegisters; ++i) raised += r[i] != 0 ? 1 : 0;
    CHECK(raised == 1);
    CHECK(r[c.index] == c.run);
  }
}

TEST_CASE("HyperLogLog registers: a dense string the server accepts, every 6-bit register") {
  rcoord::hll::Registers r;
  std::string dense = r.dense();
  REQUIRE(dense.size() == 16 + 12288);
  CHECK(dense.substr(0, 5) == std::string("HYLL\0", 5));          // magic, dense encoding
  CHECK(static_cast<unsigned char>(dense[15]) == 0x80);           // cached count is stale
  CHECK(dense.find_first_not_of('\0', 16) == std::string::npos);  // no register raised

  // Enough items that every register is raised, several to high runs; whatever their
  // values, decoding the dense string gives each back (the last register's bits included).
  for (int i = 0; i < 400'000; ++i) r.add("item-" + std::to_string(i));
  std::array<std::uint8_t, rcoord::hll::kRegisters> back{};
  REQUIRE(rcoord::hll::decode_dense(r.dense(), back));
  std::size_t high = 0;
  for (std::size_t i = 0; i < rcoord::hll::kRegisters; ++i) {
    CAPTURE(i);
    REQUIRE(back[i] == r[i]);
    REQUIRE(r[i] != 0);
    high += r[i] >= 16 ? 1 : 0;
  }
  CHECK(high > 0);
  // Raising is a maximum: adding again changes nothing.
  std::string before = r.dense();
  r.add("item-7");
  CHECK(r.dense() == before);
  CHECK_FALSE(rcoord::hll::decode_dense("HYLL", back));
}

TEST_CASE("Bloom sizing: the fewest bits at which a whole number of hashes keeps the rate") {
  auto s = rcoord::bloom::size_for(100000, 0.01);
  CHECK(s.bits == 959296);
  CHECK(s.hashes == 7);
  s = rcoord::bloom::size_for(10000, 0.001);
  CHECK(s.bits == 143777);
  CHECK(s.hashes == 10);
  s = rcoord::bloom::size_for(1, 0.5);
  CHECK(s.bits == 2);    // ceil(1 / ln 2)
  CHECK(s.hashes == 1);  // log2(1/0.5): k = m/n ln 2 computed in floating point said 2
  // Every size keeps its rate: the real optimum (-n ln p / (ln 2)^2 bits, log2(1/p) hashes)
  // rounded up would miss it (by 0.4% at 1%, by 12% at 50%).
  for (double p : {0.9, 0.5, 0.3, 0.1, 0.05, 0.01, 0.001, 1e-6, 1e-12}) {
    for (std::uint64_t n : {1, 10, 100, 10000, 10000000}) {
      CAPTURE(p);
      CAPTURE(n);
      auto z = rcoord::bloom::size_for(n, p);
      CHECK(z.hashes >= 1);
      CHECK(z.hashes <= 64);
      CHECK(layer_rate(z, static_cast<double>(n)) <= p * (1 + 1e-9));
    }
  }
}

TEST_CASE("a scalable filter's layers add up to less than 1.67 x the rate, up to the cap") {
  // With --expansion 1 a filter reaches the layer cap soonest (64 x capacity), each layer at
  // 0.4 x the rate of the one before: p + 0.4p + ... + 0.4^63 p < p / 0.6, and each layer keeps
  // its own rate. (The room left below 2p is for what the formula does not see: a real layer
  // at capacity shows a few percent more than its rate.)
  for (double p : {0.5, 0.1, 0.01, 0.001, 1e-9}) {
    for (std::uint64_t capacity : {1, 100, 10000}) {
      CAPTURE(p);
      CAPTURE(capacity);
      rcoord::bloom::Meta m;
      m.capacity = capacity;
      m.error_rate = p;
      m.expansion = 1;
      double total = 0;
      for (std::size_t i = 0; i < rcoord::bloom::kMaxLayers; ++i) {
        auto l = rcoord::bloom::next_layer(m, i);
        REQUIRE(l.bits > 0);
        CHECK(l.capacity == capacity);
        total += layer_rate({l.bits, l.hashes}, static_cast<double>(l.capacity));
      }
      CHECK(total < p / (1 - rcoord::bloom::kTightening));
      CHECK(total < 1.67 * p);
      // No layer past the cap: a filter there is full.
      CHECK(rcoord::bloom::next_layer(m, rcoord::bloom::kMaxLayers).bits == 0);
    }
  }
}

TEST_CASE("scaling: each layer larger by the expansion, at 0.4 x the error rate") {
  rcoord::bloom::Meta m;
  m.capacity = 1000;
  m.error_rate = 0.01;
  m.expansion = 2;
  auto l1 = rcoord::bloom::next_layer(m, 1);
  CHECK(l1.capacity == 2000);
  CHECK(l1.bits == rcoord::bloom::size_for(2000, 0.004).bits);
  CHECK(l1.hashes == rcoord::bloom::size_for(2000, 0.004).hashes);
  auto l2 = rcoord::bloom::next_layer(m, 2);
  CHECK(l2.capacity == 4000);
  CHECK(l2.bits == rcoord::bloom::size_for(4000, 0.0016).bits);
  // A layer past 2^32 bits may not be created (bits 0).
  m.capacity = 300'000'000;
  CHECK(rcoord::bloom::next_layer(m, 0).bits > 0);
  CHECK(rcoord::bloom::next_layer(m, 1).bits == 0);
}

TEST_CASE("Bloom positions: pos_i = h1 + i*h2 + (i^3-i)/6 mod 2^64, then mod m") {
  rcoord::Hash128 h{0xfedcba9876543210ULL, 0x0123456789abcdefULL};
  std::vector<std::uint64_t> got;
  rcoord::bloom::for_each_position(h, 1'000'003, 12, [&](std::uint64_t p) { got.push_back(p); });
  REQUIRE(got.size() == 12);
  for (std::uint64_t i = 0; i < 12; ++i) {
    std::uint64_t want = (h.h1 + i * h.h2 + (i * i * i - i) / 6) % 1'000'003;
    CHECK(got[i] == want);
  }
  // Stable across versions: the positions of one item in one layer, written down.
  got.clear();
  rcoord::bloom::for_each_position(rcoord::murmur3_128("hello"), 958506, 7,
                                   [&](std::uint64_t p) { got.push_back(p); });
  std::vector<std::uint64_t> expected;
  auto hh = rcoord::murmur3_128("hello");
  for (std::uint64_t i = 0; i < 7; ++i) {
    expected.push_back((hh.h1 + i * hh.h2 + (i * i * i - i) / 6) % 958506);
  }
  CHECK(got == expected);
}

TEST_CASE("simple case folding: Latin, Greek, Cyrillic") {
  CHECK(fold_case("Zürich") == "zürich");
  CHECK(fold_case("ZÜRICH") == "zürich");
  CHECK(fold_case("ÀÉÎÕÜ Ÿ") == "àéîõü ÿ");
  CHECK(fold_case("Ĳssel Ŋ Ǆ") == "ĳssel ŋ ǆ");
  CHECK(fold_case("ΑΘΗΝΑ") == "αθηνα");
  CHECK(fold_case("ΟΔΥΣΣΕΥΣ") == "οδυσσευσ");
  CHECK(fold_case("ὈΔΥΣΣΕΎΣ") == "ὀδυσσεύσ");
  CHECK(fold_case("οδυσσευς") == "οδυσσευσ");  // final sigma folds to σ
  CHECK(fold_case("МОСКВА Ёлка") == "москва ёлка");
  CHECK(fold_case("ſ") == "s");            // long s
  CHECK(fold_case("\u212A") == "k");       // Kelvin sign
  CHECK(fold_case("\u13A0") == "\u13A0");  // Cherokee capitals are the folded form
  CHECK(fold_case("\uAB70") == "\u13A0");
  CHECK(fold_case("𐐀") == "𐐨");  // Deseret, 4-byte UTF-8
}

TEST_CASE("simple case folding: German sharp s, Turkish i, CJK") {
  CHECK(fold_case("ẞ") == "ß");  // capital sharp s folds to ß (simple folding)
  CHECK(fold_case("ß") == "ß");  // and ß stays (full folding would give "ss")
  CHECK(fold_case("STRAẞE") == "straße");
  CHECK(fold_case("I") == "i");  // no Turkic tailoring
  CHECK(fold_case("İ") == "İ");  // U+0130 has no simple folding
  CHECK(fold_case("ı") == "ı");  // U+0131 neither
  CHECK(fold_case("東京タワー") == "東京タワー");
  CHECK(fold_case("서울") == "서울");
}

TEST_CASE("case folding keeps accents and survives bytes that are not UTF-8") {
  CHECK(fold_case("Zu") != fold_case("Zü").substr(0, 2));
  CHECK(fold_case(std::string("A\xff"
                              "B\xc3",
                              4)) == std::string("a\xff"
                                                 "b\xc3",
                                                 4));
  CHECK(fold_case(std::string("\xc0\xaf", 2)) == std::string("\xc0\xaf", 2));  // overlong
  CHECK(fold_case("") == "");
}

TEST_CASE("the folding table agrees with CaseFolding.txt where it is installed") {
  std::ifstream file("/usr/share/unicode/CaseFolding.txt");
  if (!file) {
    MESSAGE("CaseFolding.txt not installed (Debian package unicode-data): skipped");
    return;
  }
  std::string line;
  int checked = 0;
  std::vector<bool> mapped(0x110000, false);
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string code;
    std::string status;
    std::string target;
    std::getline(in, code, ';');
    std::getline(in, status, ';');
    std::getline(in, target, ';');
    status.erase(0, status.find_first_not_of(' '));
    if (status != "C" && status != "S") continue;
    auto from = static_cast<char32_t>(std::stoul(code, nullptr, 16));
    auto to = static_cast<char32_t>(std::stoul(target, nullptr, 16));
    CHECK(rcoord::fold_code_point(from) == to);
    mapped[from] = true;
    ++checked;
  }
  CHECK(checked > 1400);
  int identity = 0;
  for (char32_t c = 0; c < 0x110000; ++c) {
    if (!mapped[c] && rcoord::fold_code_point(c) != c) {
      FAIL_CHECK("U+" << std::hex << static_cast<unsigned>(c) << " folds but should not");
    }
    identity += mapped[c] ? 0 : 1;
  }
  CHECK(identity > 1000000);
}

TEST_CASE("complete members: folded form, NUL, the term as added") {
  CHECK(rcoord::complete::member_of("Zürich") == std::string("zürich\0Zürich", 15));
}

TEST_CASE("views of bloom results") {
  nlohmann::ordered_json j;
  rcoord::bloom::ItemResult added{"https://a/", true, false};
  rcoord::bloom::added_json(j, added);
  CHECK(json_of(j) == R"({"item":"https://a/","added":true})");
  rcoord::bloom::ItemResult refused{"x", false, true};
  rcoord::bloom::added_json(j, refused);
  CHECK(json_of(j) == R"({"item":"x","added":false,"full":true})");
  rcoord::bloom::present_json(j, added);
  CHECK(json_of(j) == R"({"item":"https://a/","present":true})");

  rcoord::bloom::Reserved r{true, "f", 100000, 0.01, 958506, 7, 119814};
  to_json(j, r);
  CHECK(
      json_of(j) ==
      R"({"reserved":true,"name":"f","capacity":100000,"error_rate":0.01,"bits":958506,"hashes":7,"bytes":119814})");
  CHECK(to_text(r).find("bits: 958506\nhashes: 7\nbytes: 119814\n") != std::string::npos);

  rcoord::bloom::Info info;
  info.exists = true;
  info.name = "f";
  info.capacity = 300;
  info.error_rate = 0.01;
  info.items = 250;
  info.layers = 2;
  info.bits = 9000;
  info.hashes = 8;
  info.bytes = 1125;
  info.fill_ratio = 0.4321234;
  info.expansion = 2;
  info.estimated_error_rate = 0.0123456789;
  to_json(j, info);
  for (const char* field :
       {"capacity", "error_rate", "items", "layers", "bits", "hashes", "bytes", "fill_ratio"}) {
    CHECK(j.contains(field));
  }
  CHECK(j["fill_ratio"] == 0.432123);
  CHECK(to_text(info).find("fill_ratio: 0.432123\n") != std::string::npos);
}

TEST_CASE("views of pf and complete results") {
  nlohmann::ordered_json j;
  to_json(j, rcoord::pf::Added{"v", 3, true});
  // name by the one naming rule; key, keys and list are the deprecated aliases
  CHECK(json_of(j) == R"({"name":"v","key":"v","items":3,"changed":true})");
  to_json(j, rcoord::pf::Count{{"a", "b"}, 42});
  CHECK(json_of(j) == R"({"names":["a","b"],"keys":["a","b"],"count":42})");
  to_json(j, rcoord::pf::Count{{"a"}, 42});
  CHECK(json_of(j) == R"({"name":"a","names":["a"],"keys":["a"],"count":42})");
  CHECK(to_text(rcoord::pf::Count{{"a"}, 42}) == "42");

  to_json(j, rcoord::complete::Added{"Zürich", true, false, 0});
  CHECK(json_of(j) == R"({"term":"Zürich","added":true})");
  to_json(j, rcoord::complete::Added{"x", false, true, 3});
  CHECK(json_of(j) == R"({"term":"x","added":false,"score":3})");
  to_json(j, rcoord::complete::Suggestion{"x", 2.5});
  CHECK(json_of(j) == R"({"term":"x","score":2.5})");
  to_json(j, rcoord::complete::Pushed{"l", "bob", 2});
  CHECK(json_of(j) == R"({"name":"l","list":"l","item":"bob","length":2})");
  CHECK(to_text(rcoord::complete::Pushed{"l", "bob", 2}) == "2");
}
