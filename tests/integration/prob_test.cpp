// bloom, pf and complete through their C++ API against a real redis-server: measured
// false-positive rates, layer bookkeeping, HyperLogLog accuracy, suggestion order.

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "bloom.hpp"
#include "complete.hpp"
#include "errors.hpp"
#include "hll.hpp"
#include "lua_scripts.hpp"
#include "murmur3.hpp"
#include "pf.hpp"
#include "redis_server.hpp"

namespace bloom = rcoord::bloom;
namespace complete = rcoord::complete;

namespace {

struct Fixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};
};

std::vector<std::string> numbered(const std::string& stem, std::size_t from, std::size_t to) {
  std::vector<std::string> out;
  for (std::size_t i = from; i < to; ++i) out.push_back(stem + std::to_string(i));
  return out;
}

// Streams `items` through an Adder in batches, as the CLI does; all results in order.
std::vector<bloom::ItemResult> add_all(rcoord::Connection& conn, const rcoord::Keys& keys,
                                       const std::string& name,
                                       const std::vector<std::string>& items) {
  bloom::Adder adder(conn, keys, name);
  std::vector<bloom::ItemResult> out;
  for (std::size_t i = 0; i < items.size(); i += bloom::kBatchSize) {
    std::vector<std::string> batch(
        items.begin() + static_cast<std::ptrdiff_t>(i),
        items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), i + bloom::kBatchSize)));
    const auto& r = adder.add(batch);
    out.insert(out.end(), r.begin(), r.end());
  }
  const auto& r = adder.finish();
  out.insert(out.end(), r.begin(), r.end());
  return out;
}

// How many of `items` the filter says may be present.
std::size_t count_present(rcoord::Connection& conn, const rcoord::Keys& keys,
                          const std::string& name, const std::vector<std::string>& items) {
  bloom::Tester tester(conn, keys, name);
  std::size_t present = 0;
  for (std::size_t i = 0; i < items.size(); i += bloom::kBatchSize) {
    std::vector<std::string> batch(
        items.begin() + static_cast<std::ptrdiff_t>(i),
        items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), i + bloom::kBatchSize)));
    for (const auto& r : tester.test(batch)) present += r.yes ? 1 : 0;
  }
  for (const auto& r : tester.finish()) present += r.yes ? 1 : 0;
  return present;
}

}  // namespace

TEST_CASE_FIXTURE(Fixture, "every bloom/complete script loads under its embedded SHA1") {
  for (const auto* s :
       {&rcoord::lua::kBloomCreate, &rcoord::lua::kBloomGrant, &rcoord::lua::kBloomMerge,
        &rcoord::lua::kPfAddRegisters, &rcoord::lua::kCompleteAdd, &rcoord::lua::kCompleteRemove,
        &rcoord::lua::kCompleteSuggest, &rcoord::lua::kCompleteRecentPush}) {
    auto r = conn.command({"SCRIPT", "LOAD", std::string(s->body)});
    CHECK(rcoord::reply_string(r.get()) == s->sha1);
  }
}

TEST_CASE_FIXTURE(Fixture, "bloom reserve: sizes, exists already, bad options") {
  auto r = bloom::reserve(conn, keys, "f", {100000, 0.01, 2, false});
  CHECK(r.reserved);
  CHECK(r.bits == 959296);
  CHECK(r.hashes == 7);
  CHECK(r.bytes == 119912);
  auto again = bloom::reserve(conn, keys, "f", {5, 0.5, 2, false});
  CHECK_FALSE(again.reserved);
  CHECK(again.bits == 959296);  // the existing filter's figures
  // The bitmap is allocated in full at once.
  auto len = conn.command({"STRLEN", keys.aux("bloom", "f", "0")});
  CHECK(rcoord::reply_integer(len.get()) == 119912);

  auto usage = [&](bloom::ReserveOptions o) {
    try {
      bloom::reserve(conn, keys, "g", o);
    } catch (const rcoord::Error& e) {
      return e.code() == rcoord::kUsage;
    }
    return false;
  };
  CHECK(usage({0, 0.01, 2, false}));
  CHECK(usage({100, 0, 2, false}));
  CHECK(usage({100, 1, 2, false}));
  CHECK(usage({100, 0.01, 0, false}));
  CHECK(usage({1'000'000'000'000, 0.01, 2, false}));  // more than 2^32 bits
}

TEST_CASE_FIXTURE(Fixture, "bloom: measured false-positive rate at capacity and at 3x") {
  bloom::reserve(conn, keys, "fpr", {100000, 0.01, 2, false});
  auto members = numbered("member-", 0, 100000);
  auto results = add_all(conn, keys, "fpr", members);
  REQUIRE(results.size() == members.size());
  std::size_t added = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    CHECK(results[i].item == members[i]);
    added += results[i].yes ? 1 : 0;
  }
  CHECK(added > 98000);  // the rest collided with earlier items: false positives while adding

  // No false negatives; the false-positive rate at capacity is within 1.5x of 1 %.
  CHECK(count_present(conn, keys, "fpr", members) == members.size());
  auto others = numbered("other-", 0, 100000);
  double fpr = static_cast<double>(count_present(conn, keys, "fpr", others)) / 100000.0;
  MESSAGE("false-positive rate at capacity: " << fpr);
  CHECK(fpr <= 0.015);

  auto info = bloom::info(conn, keys, "fpr");
  CHECK(info.layers == 1);
  CHECK(info.items == static_cast<std::int64_t>(added));
  CHECK(info.fill_ratio > 0.4);
  CHECK(info.fill_ratio < 0.6);
  CHECK(info.estimated_error_rate == doctest::Approx(0.01).epsilon(0.3));

  // Scaling to 3x capacity keeps the overall rate near the requested one.
  auto more = numbered("member-", 100000, 300000);
  add_all(conn, keys, "fpr", more);
  members.insert(members.end(), more.begin(), more.end());
  CHECK(count_present(conn, keys, "fpr", members) == members.size());
  fpr = static_cast<double>(count_present(conn, keys, "fpr", others)) / 100000.0;
  MESSAGE("false-positive rate at 3x capacity: " << fpr);
  CHECK(fpr <= 0.02);
  info = bloom::info(conn, keys, "fpr");
  CHECK(info.layers == 2);
  CHECK(info.capacity == 300000);
}

TEST_CASE_FIXTURE(Fixture, "bloom layers never take more than their capacity") {
  bloom::reserve(conn, keys, "small", {1000, 0.01, 2, false});
  auto items = numbered("i", 0, 20000);
  auto results = add_all(conn, keys, "small", items);
  std::int64_t added = 0;
  for (const auto& r : results) added += r.yes ? 1 : 0;
  bloom::Meta meta;
  REQUIRE(bloom::read_meta(conn, keys, "small", meta));
  CHECK(meta.layers.size() == 5);  // 1000 + 2000 + 4000 + 8000 + 16000 >= 20000
  std::int64_t sum = 0;
  for (const auto& l : meta.layers) {
    CHECK(l.used <= static_cast<std::int64_t>(l.capacity));
    CHECK(l.used == l.items);  // settled: no slot still held
    sum += l.items;
  }
  CHECK(meta.items == added);
  CHECK(sum == added);
  for (std::size_t i = 0; i + 1 < meta.layers.size(); ++i) {
    CHECK(meta.layers[i].items == static_cast<std::int64_t>(meta.layers[i].capacity));
  }
  CHECK(count_present(conn, keys, "small", items) == items.size());
  // Adding them again adds nothing and changes no count.
  for (const auto& r : add_all(conn, keys, "small", items)) CHECK_FALSE(r.yes);
  bloom::Meta after;
  REQUIRE(bloom::read_meta(conn, keys, "small", after));
  CHECK(after.items == meta.items);
  CHECK(after.layers.size() == meta.layers.size());
}

TEST_CASE_FIXTURE(Fixture, "a nonscaling bloom filter refuses new items when full") {
  bloom::reserve(conn, keys, "fixed", {100, 0.01, 0, true});
  auto items = numbered("x", 0, 300);
  auto results = add_all(conn, keys, "fixed", items);
  std::size_t added = 0, refused = 0;
  for (const auto& r : results) {
    added += r.yes ? 1 : 0;
    refused += r.full ? 1 : 0;
    CHECK_FALSE((r.yes && r.full));
  }
  CHECK(added == 100);
  CHECK(refused > 150);  // the others were (false) positives: not refused
  // An item already in it is not refused.
  auto again = add_all(conn, keys, "fixed", {"x0"});
  CHECK_FALSE(again[0].yes);
  CHECK_FALSE(again[0].full);
  auto info = bloom::info(conn, keys, "fixed");
  CHECK(info.nonscaling);
  CHECK(info.layers == 1);
  CHECK(info.items == 100);
}

TEST_CASE_FIXTURE(Fixture, "a scalable bloom filter at its layer cap is full, and stays readable") {
  // --expansion 1: every layer holds 50 items, so the cap is reached at 64 x 50.
  bloom::reserve(conn, keys, "capped", {50, 0.01, 1, false});
  auto items = numbered("c", 0, 4000);
  auto results = add_all(conn, keys, "capped", items);
  std::vector<std::string> added;
  std::size_t refused = 0;
  for (const auto& r : results) {
    if (r.yes) added.push_back(r.item);
    refused += r.full ? 1 : 0;
  }
  CHECK(added.size() == 50 * bloom::kMaxLayers);
  CHECK(refused > 500);
  bloom::Meta meta;
  REQUIRE(bloom::read_meta(conn, keys, "capped", meta));
  CHECK(meta.layers.size() == bloom::kMaxLayers);
  for (const auto& l : meta.layers) CHECK(l.items == 50);
  // Test and info keep working; nothing added was lost.
  CHECK(count_present(conn, keys, "capped", added) == added.size());
  auto info = bloom::info(conn, keys, "capped");
  CHECK(info.layers == static_cast<std::int64_t>(bloom::kMaxLayers));
  CHECK(info.items == static_cast<std::int64_t>(added.size()));
  // Later adds are refused too, and change nothing.
  for (const auto& r : add_all(conn, keys, "capped", numbered("later", 0, 100))) CHECK_FALSE(r.yes);
  REQUIRE(bloom::read_meta(conn, keys, "capped", meta));
  CHECK(meta.layers.size() == bloom::kMaxLayers);
  CHECK(meta.items == static_cast<std::int64_t>(added.size()));
  // The rate promised at reserve time holds at the cap: the layers' rates (1%, 0.5%, ...)
  // add up to less than 2%; measured within the 1.5x the guarantees allow for sampling.
  auto others = numbered("other-", 0, 5000);
  double fpr = static_cast<double>(count_present(conn, keys, "capped", others)) / 5000.0;
  MESSAGE("false-positive rate at the layer cap: " << fpr);
  CHECK(fpr <= 0.03);
}

TEST_CASE_FIXTURE(Fixture, "a filter an older rcoord let grow past the cap stays readable") {
  bloom::reserve(conn, keys, "grown", {2, 0.01, 1, false});
  add_all(conn, keys, "grown", numbered("g", 0, 400));
  // One layer past the cap, as the bloom_grant script of older versions created it.
  std::string meta_key = keys.object("bloom", "grown");
  auto l = bloom::next_layer({2, 0.01, 1, 0, {}}, bloom::kMaxLayers);
  CHECK(l.bits == 0);
  std::string n = std::to_string(bloom::kMaxLayers);
  conn.command({"HSET", meta_key, "capacity:" + n, "2", "bits:" + n, "100", "hashes:" + n, "7",
                "used:" + n, "0", "items:" + n, "0", "layers",
                std::to_string(bloom::kMaxLayers + 1)});
  conn.command({"SETBIT", keys.aux("bloom", "grown", n), "99", "0"});
  auto info = bloom::info(conn, keys, "grown");
  CHECK(info.layers == static_cast<std::int64_t>(bloom::kMaxLayers + 1));
  CHECK(count_present(conn, keys, "grown", {"g0", "g1"}) == 2);
  auto more = add_all(conn, keys, "grown", numbered("h", 0, 10));
  std::size_t added_now = 0;
  for (const auto& r : more) added_now += r.yes ? 1 : 0;
  CHECK(added_now == 2);  // the extra layer's room, then full
}

TEST_CASE_FIXTURE(Fixture, "bloom add creates a missing filter with the defaults") {
  auto results = add_all(conn, keys, "auto", {"a", "b", "a"});
  CHECK(results[0].yes);
  CHECK(results[1].yes);
  CHECK_FALSE(results[2].yes);  // the same item twice in one batch: added once
  auto info = bloom::info(conn, keys, "auto");
  CHECK(info.capacity == 10000);
  CHECK(info.error_rate == 0.01);
  CHECK(info.items == 2);
  CHECK(count_present(conn, keys, "missing", {"a"}) == 0);
  CHECK_FALSE(bloom::info(conn, keys, "missing").exists);
}

TEST_CASE_FIXTURE(Fixture, "items sharing a BITFIELD answer as if added one at a time") {
  // A crowded filter (false positives while adding), and items that come again within one
  // command (kItemsPerBitfield items each), right after themselves, and in later commands.
  std::vector<std::string> items;
  for (std::size_t k = 0; k < 700; ++k) {
    items.push_back("i" + std::to_string(k * 7 % 400));
    if (k % 16 == 5) items.push_back(items.back());
  }
  bloom::ReserveOptions crowded;
  crowded.capacity = 1000;
  crowded.error_rate = 0.2;
  bloom::reserve(conn, keys, "packed", crowded);
  auto packed = add_all(conn, keys, "packed", items);

  // The answers of one item at a time, from the same bits kept here.
  bloom::Meta meta;
  REQUIRE(bloom::read_meta(conn, keys, "packed", meta));
  REQUIRE(meta.layers.size() == 1);
  const bloom::Layer& l = meta.layers[0];
  std::vector<bool> bits(l.bits);
  REQUIRE(packed.size() == items.size());
  std::int64_t added = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    bool flipped = false;
    bloom::for_each_position(rcoord::murmur3_128(items[i]), l.bits, l.hashes,
                             [&](std::uint64_t pos) {
                               flipped = flipped || !bits[pos];
                               bits[pos] = true;
                             });
    CHECK(packed[i].item == items[i]);
    CHECK_MESSAGE(packed[i].yes == flipped, "item ", i, ": ", items[i]);
    added += flipped ? 1 : 0;
  }
  CHECK(added < 400);  // each distinct item added at most once, and collisions took some
  CHECK(added > 300);
  CHECK(bloom::info(conn, keys, "packed").items == added);
}

TEST_CASE_FIXTURE(Fixture, "bloom and pf refuse keys that hold something else") {
  conn.command({"RPUSH", keys.object("bloom", "list"), "x"});
  auto code = [&](auto fn) {
    try {
      fn();
    } catch (const rcoord::Error& e) {
      // The object and its key are named: "bloom filter 'list': key '...{bloom:list}' holds".
      CHECK(std::string(e.what()).find("': key '") != std::string::npos);
      return e.code();
    }
    return rcoord::kYes;
  };
  CHECK(code([&] { add_all(conn, keys, "list", {"a"}); }) == rcoord::kServer);
  CHECK(code([&] { bloom::info(conn, keys, "list"); }) == rcoord::kServer);
  CHECK(code([&] { bloom::reserve(conn, keys, "list", {}); }) == rcoord::kServer);
  CHECK(rcoord::reply_integer(conn.command({"LLEN", keys.object("bloom", "list")}).get()) == 1);

  conn.command({"SET", keys.object("pf", "str"), "not a hyperloglog"});
  CHECK(code([&] {
          rcoord::pf::Adder a(conn, keys, "str");
          a.add({"x"});
          a.finish();
        }) == rcoord::kServer);
  CHECK(code([&] { rcoord::pf::count(conn, keys, {"str"}); }) == rcoord::kServer);
}

TEST_CASE_FIXTURE(Fixture, "pf count of 1,000,000 distinct items is within 2% of the truth") {
  rcoord::pf::Adder adder(conn, keys, "visitors");
  std::vector<std::string> batch;
  for (std::size_t i = 0; i < 1'000'000; ++i) {
    batch.push_back("visitor-" + std::to_string(i));
    if (batch.size() == rcoord::pf::kBatchSize) {
      adder.add(batch);
      batch.clear();
    }
  }
  adder.add(batch);
  const auto& added = adder.finish();
  CHECK(added.items == 1'000'000);
  CHECK(added.changed);
  auto c = rcoord::pf::count(conn, keys, {"visitors"});
  MESSAGE("HyperLogLog estimate of 1,000,000: " << c.count);
  CHECK(c.count >= 980'000);
  CHECK(c.count <= 1'020'000);

  rcoord::pf::Adder small(conn, keys, "other");
  small.add({"visitor-1", "someone-new"});
  small.finish();
  auto merged = rcoord::pf::merge(conn, keys, "all", {"visitors", "other"});
  CHECK(merged.count >= c.count);
  CHECK(merged.count <= c.count + 2);
  CHECK(rcoord::pf::count(conn, keys, {"visitors", "other"}).count == merged.count);
  // Adding what is there changes nothing.
  rcoord::pf::Adder again(conn, keys, "other");
  again.add({"visitor-1"});
  CHECK_FALSE(again.finish().changed);
}

namespace {

// Streams `items` through a pf Adder in batches, as the CLI does.
rcoord::pf::Added pf_add_all(rcoord::Connection& conn, const rcoord::Keys& keys,
                             const std::string& name, const std::vector<std::string>& items,
                             rcoord::Millis expire = rcoord::Millis{0}) {
  rcoord::pf::Adder adder(conn, keys, name, expire);
  for (std::size_t i = 0; i < items.size(); i += rcoord::pf::kBatchSize) {
    std::size_t end = std::min(items.size(), i + rcoord::pf::kBatchSize);
    adder.add({items.begin() + static_cast<std::ptrdiff_t>(i),
               items.begin() + static_cast<std::ptrdiff_t>(end)});
  }
  return adder.finish();
}

// PFADDs of `items`, 100 to a command, as a reference for what the server makes of them.
void pfadd_plain(rcoord::Connection& conn, const std::string& key,
                 const std::vector<std::string>& items) {
  std::vector<rcoord::Args> commands;
  for (std::size_t i = 0; i < items.size(); i += 100) {
    rcoord::Args cmd{"PFADD", key};
    cmd.insert(cmd.end(), items.begin() + static_cast<std::ptrdiff_t>(i),
               items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), i + 100)));
    commands.push_back(std::move(cmd));
  }
  for (const auto& r : conn.pipeline(commands)) REQUIRE(r->type == REDIS_REPLY_INTEGER);
}

// Calls of `command` the server counted (INFO commandstats; also those made by scripts).
long long calls_of(rcoord::Connection& conn, const std::string& command) {
  std::string info = rcoord::reply_string(conn.command({"INFO", "commandstats"}).get());
  std::string field = "cmdstat_" + command + ":calls=";
  auto at = info.find(field);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + field.size()));
}

std::string registers_of(rcoord::Connection& conn, const std::string& key) {
  std::string hll = rcoord::reply_string(conn.command({"GET", key}).get());
  REQUIRE(hll.size() == rcoord::hll::kDenseBytes);
  return hll.substr(rcoord::hll::kHeaderBytes);  // the header's cached count may differ
}

}  // namespace

// A server of its own, so that its command counts are this test's alone.
TEST_CASE("bloom add of a large input merges its bits: the same bits and answers as BITFIELD") {
  rcoord::test::RedisServer server;
  rcoord::Connection conn = server.connect();
  rcoord::Keys keys{"t:"};
  bloom::reserve(conn, keys, "f", {100000, 0.01, 2, false});
  const bloom::Layer l{100000, 959296, 7, 0, 0};
  std::string layer = keys.aux("bloom", "f", "0");

  // A few items are not worth the bitmap: BITFIELD.
  auto few = numbered("few-", 0, 10);
  add_all(conn, keys, "f", few);
  CHECK(calls_of(conn, "bitop") == 0);

  // Items repeated within a batch, right away and later, and across batches.
  std::vector<std::string> items;
  for (std::size_t i = 0; i < 30'000; ++i) {
    items.push_back("item-" + std::to_string(i));
    if (i % 7 == 0) items.push_back("item-" + std::to_string(i / 2));
    if (i % 11 == 0) items.push_back("item-" + std::to_string(i));
  }
  auto results = add_all(conn, keys, "f", items);
  REQUIRE(results.size() == items.size());
  CHECK(calls_of(conn, "bitop") >= 1);

  // The reference: one BITFIELD per item, in order, on a bitmap of the same size.
  conn.command({"SETBIT", "ref", std::to_string(l.bits - 1), "0"});
  for (const auto& item : few) {
    bloom::for_each_position(rcoord::murmur3_128(item), l.bits, l.hashes, [&](std::uint64_t p) {
      conn.command({"SETBIT", "ref", std::to_string(p), "1"});
    });
  }
  std::size_t mismatches = 0;
  std::int64_t added = 0;
  for (std::size_t first = 0; first < items.size(); first += 1000) {
    std::size_t last = std::min(items.size(), first + 1000);
    std::vector<rcoord::Args> commands;
    for (std::size_t i = first; i < last; ++i) {
      rcoord::Args cmd{"BITFIELD", "ref"};
      bloom::for_each_position(rcoord::murmur3_128(items[i]), l.bits, l.hashes,
                               [&](std::uint64_t p) {
                                 cmd.insert(cmd.end(), {"SET", "u1", std::to_string(p), "1"});
                               });
      commands.push_back(std::move(cmd));
    }
    auto replies = conn.pipeline(commands);
    for (std::size_t i = first; i < last; ++i) {
      bool was_added = !bloom::bits_all_ones(replies[i - first].get());
      added += was_added ? 1 : 0;
      mismatches += was_added == results[i].yes ? 0 : 1;
    }
  }
  CHECK(mismatches == 0);
  CHECK(added < static_cast<std::int64_t>(items.size()));  // the repeats were not added
  CHECK(rcoord::reply_string(conn.command({"GET", layer}).get()) ==
        rcoord::reply_string(conn.command({"GET", "ref"}).get()));
  CHECK(bloom::info(conn, keys, "f").items == added + static_cast<std::int64_t>(few.size()));
  CHECK(conn.command({"DBSIZE"})->integer == 3);  // metadata, layer, ref: no scratch key left

  // bloom test of as many items reads the bitmap whole: the answers of BITFIELD_RO.
  auto probes = numbered("probe-", 0, 20'000);
  probes.insert(probes.end(), items.begin(), items.begin() + 5000);
  auto reads_before = calls_of(conn, "bitfield_ro");
  bloom::Tester tester(conn, keys, "f");
  std::vector<bloom::ItemResult> answers;
  for (std::size_t i = 0; i < probes.size(); i += bloom::kBatchSize) {
    std::vector<std::string> batch(probes.begin() + static_cast<std::ptrdiff_t>(i),
                                   probes.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                        probes.size(), i + bloom::kBatchSize)));
    const auto& r = tester.test(batch);
    answers.insert(answers.end(), r.begin(), r.end());
  }
  const auto& rest = tester.finish();
  answers.insert(answers.end(), rest.begin(), rest.end());
  REQUIRE(answers.size() == probes.size());
  CHECK(calls_of(conn, "bitfield_ro") == reads_before);
  std::size_t wrong = 0;
  std::size_t present = 0;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    rcoord::Args cmd{"BITFIELD_RO", "ref"};
    bloom::for_each_position(rcoord::murmur3_128(probes[i]), l.bits, l.hashes,
                             [&](std::uint64_t p) {
                               cmd.insert(cmd.end(), {"GET", "u1", std::to_string(p)});
                             });
    bool yes = bloom::bits_all_ones(conn.command(cmd).get());
    present += yes ? 1 : 0;
    wrong += yes == answers[i].yes && answers[i].item == probes[i] ? 0 : 1;
  }
  CHECK(wrong == 0);
  CHECK(present >= 5000);  // the added ones, and a few false positives
  CHECK(present < 5000 + 1000);

  // A filter's expiry outlives a merge (BITOP writes a new value, without it).
  bloom::ReserveOptions expiring{100000, 0.01, 2, false};
  expiring.expire = rcoord::Millis{60'000};
  bloom::reserve(conn, keys, "g", expiring);
  auto before = calls_of(conn, "bitop");
  add_all(conn, keys, "g", numbered("g-", 0, 5000));
  CHECK(calls_of(conn, "bitop") > before);
  auto ttl = conn.command({"PTTL", keys.aux("bloom", "g", "0")})->integer;
  CHECK(ttl > 0);
  CHECK(ttl <= 60'000);
}

TEST_CASE("pf add of a large input merges its registers: the same as PFADD's, changed exact") {
  rcoord::test::RedisServer server;
  rcoord::Connection conn = server.connect();
  rcoord::Keys keys{"t:"};
  auto items = numbered("page-", 0, 100'000);

  auto added = pf_add_all(conn, keys, "pages", items);
  CHECK(added.items == items.size());
  CHECK(added.changed);
  // Only the first batch went as PFADD (100 items each); the rest as merged registers.
  CHECK(calls_of(conn, "pfadd") == rcoord::pf::kBatchSize / 100);
  CHECK(calls_of(conn, "pfmerge") >= 1);
  CHECK(conn.command({"DBSIZE"})->integer == 1);  // the scratch key lived inside the script

  pfadd_plain(conn, "reference", items);
  CHECK(registers_of(conn, keys.object("pf", "pages")) == registers_of(conn, "reference"));

  // The same items again raise no register.
  CHECK_FALSE(pf_add_all(conn, keys, "pages", items).changed);

  // One item that raises a register (found by PFADD on a copy), last, among the merged.
  conn.command({"COPY", "reference", "probe"});
  std::string raiser;
  for (int i = 0; raiser.empty(); ++i) {
    std::string candidate = "new-" + std::to_string(i);
    if (conn.command({"PFADD", "probe", candidate})->integer == 1) raiser = candidate;
  }
  auto again = items;
  again.push_back(raiser);
  CHECK(pf_add_all(conn, keys, "pages", again).changed);
  pfadd_plain(conn, "reference", {raiser});
  CHECK(registers_of(conn, keys.object("pf", "pages")) == registers_of(conn, "reference"));
  CHECK(rcoord::pf::count(conn, keys, {"pages"}).count ==
        conn.command({"PFCOUNT", "reference"})->integer);
}

TEST_CASE("pf add of a large input of few distinct items leaves the key sparse, as PFADD") {
  rcoord::test::RedisServer server;
  rcoord::Connection conn = server.connect();
  rcoord::Keys keys{"t:"};
  std::vector<std::string> items;
  for (std::size_t i = 0; i < 100'000; ++i) items.push_back("user-" + std::to_string(i % 20));

  auto added = pf_add_all(conn, keys, "users", items);
  CHECK(added.items == items.size());
  CHECK(added.changed);
  std::string key = keys.object("pf", "users");
  // Byte 4 of the header is the encoding: 1 sparse (a few bytes for 20 registers).
  CHECK(rcoord::reply_string(conn.command({"GETRANGE", key, "4", "4"}).get()) == "\x01");
  CHECK(rcoord::pf::count(conn, keys, {"users"}).count == 20);
  CHECK(calls_of(conn, "pfmerge") == 0);  // each merge found the key sparse and did nothing

  // An expiry given with --expire holds when the registers are merged, too.
  auto many = numbered("visit-", 0, 100'000);
  CHECK(pf_add_all(conn, keys, "visits", many, rcoord::Millis{60'000}).changed);
  CHECK(calls_of(conn, "pfmerge") >= 1);
  auto ttl = conn.command({"PTTL", keys.object("pf", "visits")})->integer;
  CHECK(ttl > 0);
  CHECK(ttl <= 60'000);
}

namespace {
std::vector<std::string> terms_of(const complete::Suggestions& s) {
  std::vector<std::string> out;
  for (const auto& t : s.terms) out.push_back(t.term);
  return out;
}
using Terms = std::vector<std::string>;
}  // namespace

TEST_CASE_FIXTURE(Fixture, "complete suggest: ASCII, mixed case, UTF-8, limit") {
  auto added = complete::add(
      conn, keys, "c",
      {"apple", "Apricot", "APPLE PIE", "banana", "applesauce", "Zürich", "zucchini", "ZÜRICH-Nord",
       "Zug", "東京", "東京タワー", "京都", "Αθήνα", "Москва", "Straße"},
      {});
  CHECK(added.size() == 15);
  for (const auto& a : added) CHECK(a.added);
  CHECK_FALSE(complete::add(conn, keys, "c", {"apple"}, {})[0].added);

  CHECK(terms_of(complete::suggest(conn, keys, "c", "app", 10)) ==
        Terms{"apple", "APPLE PIE", "applesauce"});
  CHECK(terms_of(complete::suggest(conn, keys, "c", "APP", 10)) ==
        Terms{"apple", "APPLE PIE", "applesauce"});
  CHECK(terms_of(complete::suggest(conn, keys, "c", "ap", 2)) == Terms{"apple", "APPLE PIE"});
  CHECK(terms_of(complete::suggest(conn, keys, "c", "Zü", 10)) == Terms{"Zürich", "ZÜRICH-Nord"});
  CHECK(terms_of(complete::suggest(conn, keys, "c", "ZÜ", 10)) == Terms{"Zürich", "ZÜRICH-Nord"});
  CHECK(terms_of(complete::suggest(conn, keys, "c", "zu", 10)) == Terms{"zucchini", "Zug"});
  CHECK(terms_of(complete::suggest(conn, keys, "c", "東京", 10)) == Terms{"東京", "東京タワー"});
  CHECK(terms_of(complete::suggest(conn, keys, "c", "αθ", 10)) == Terms{"Αθήνα"});
  CHECK(terms_of(complete::suggest(conn, keys, "c", "МОС", 10)) == Terms{"Москва"});
  CHECK(terms_of(complete::suggest(conn, keys, "c", "STRAẞ", 10)) == Terms{"Straße"});
  CHECK(complete::suggest(conn, keys, "c", "x", 10).terms.empty());
  CHECK(complete::suggest(conn, keys, "c", "", 100).terms.size() == 15);

  auto removed = complete::remove(conn, keys, "c", {"Zug", "nope"});
  CHECK(removed[0].removed);
  CHECK_FALSE(removed[1].removed);
  CHECK(terms_of(complete::suggest(conn, keys, "c", "zu", 10)) == Terms{"zucchini"});
}

TEST_CASE_FIXTURE(Fixture, "complete with scores: highest first, ties in folded order") {
  complete::AddOptions incr{std::nullopt, true};
  complete::add(conn, keys, "s", {"beta", "Alpha", "gamma", "delta"}, incr);
  complete::add(conn, keys, "s", {"gamma", "gamma", "delta"}, incr);
  auto set = complete::add(conn, keys, "s", {"Alpha"}, {2.5, false});
  CHECK(set[0].scored);
  CHECK(set[0].score == 2.5);
  auto both = complete::add(conn, keys, "s", {"beta"}, {10, true});  // --incr --score 10
  CHECK(both[0].score == 11);
  complete::add(conn, keys, "s", {"epsilon"}, {});  // no score: counts as 0
  auto s = complete::suggest(conn, keys, "s", "", 10);
  CHECK(s.scored);
  CHECK(terms_of(s) == Terms{"beta", "gamma", "Alpha", "delta", "epsilon"});
  CHECK(s.terms[0].score == 11);
  CHECK(s.terms[1].score == 3);
  complete::add(conn, keys, "s", {"Delta2"}, {2, false});
  CHECK(terms_of(complete::suggest(conn, keys, "s", "", 10)) ==
        Terms{"beta", "gamma", "Alpha", "delta", "Delta2", "epsilon"});  // tie: delta < delta2
  CHECK(terms_of(complete::suggest(conn, keys, "s", "D", 1)) == Terms{"delta"});

  // Many matches with scores: the limit takes the best ones.
  std::vector<std::string> many;
  for (int i = 0; i < 2500; ++i) many.push_back("m" + std::to_string(i));
  complete::add(conn, keys, "s", many, {});
  complete::add(conn, keys, "s", {"m2499"}, {100, false});
  complete::add(conn, keys, "s", {"m7"}, {50, false});
  CHECK(terms_of(complete::suggest(conn, keys, "s", "m", 3)) == Terms{"m2499", "m7", "m0"});
}

TEST_CASE_FIXTURE(Fixture, "complete: bad terms and wrong types") {
  auto code = [&](auto fn) {
    try {
      fn();
    } catch (const rcoord::Error& e) {
      return e.code();
    }
    return rcoord::kYes;
  };
  CHECK(code([&] { complete::add(conn, keys, "c", {""}, {}); }) == rcoord::kUsage);
  CHECK(code([&] { complete::add(conn, keys, "c", {std::string("a\0b", 3)}, {}); }) ==
        rcoord::kUsage);
  CHECK(code([&] { complete::suggest(conn, keys, "c", "a", 0); }) == rcoord::kUsage);
  conn.command({"SET", keys.object("complete", "str"), "x"});
  CHECK(code([&] { complete::add(conn, keys, "str", {"a"}, {}); }) == rcoord::kServer);
  CHECK(code([&] { complete::suggest(conn, keys, "str", "a", 5); }) == rcoord::kServer);
  conn.command({"SET", keys.object("recent", "str"), "x"});
  CHECK(code([&] { complete::recent_push(conn, keys, "str", "a", 5); }) == rcoord::kServer);
  CHECK(code([&] { complete::recent_suggest(conn, keys, "str", "a", 5); }) == rcoord::kServer);
  CHECK(rcoord::reply_string(conn.command({"GET", keys.object("recent", "str")}).get()) == "x");
}

TEST_CASE_FIXTURE(Fixture, "recent: most recent first, no duplicates, capped") {
  for (const char* who : {"alice", "Bob", "carol", "alice", "dave", "ALICE"}) {
    complete::recent_push(conn, keys, "contacts", who, 4);
  }
  auto all = complete::recent_suggest(conn, keys, "contacts", "", 10);
  CHECK(terms_of(all) == Terms{"ALICE", "dave", "alice", "carol"});  // Bob fell off the end
  CHECK(terms_of(complete::recent_suggest(conn, keys, "contacts", "a", 10)) ==
        Terms{"ALICE", "alice"});
  CHECK(terms_of(complete::recent_suggest(conn, keys, "contacts", "a", 1)) == Terms{"ALICE"});
  CHECK(complete::recent_push(conn, keys, "contacts", "carol", 4).length == 4);
  CHECK(terms_of(complete::recent_suggest(conn, keys, "contacts", "", 10)).front() == "carol");
  CHECK(complete::recent_suggest(conn, keys, "nobody", "", 10).terms.empty());
}
