// SPEC lifecycle through the C++ API against a real redis-server: --expire on every key of
// bloom, pf and complete objects (Bloom layers added later included), and rm (in use,
// --force, --dry-run, the counters it keeps).

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "bloom.hpp"
#include "complete.hpp"
#include "elect.hpp"
#include "errors.hpp"
#include "lock.hpp"
#include "lua_scripts.hpp"
#include "pf.hpp"
#include "redis_server.hpp"
#include "remove.hpp"
#include "script.hpp"

namespace bloom = rcoord::bloom;
namespace removal = rcoord::removal;
using rcoord::Millis;

namespace {

constexpr std::int64_t kHour = 3'600'000;

struct Fixture {
  rcoord::Connection conn = rcoord::test::shared_server().connect();
  rcoord::Keys keys{rcoord::test::unique_prefix()};

  std::int64_t pttl(const std::string& key) {
    return rcoord::reply_integer(conn.command({"PTTL", key}).get());
  }
  // Whether `key` expires within (want - 60s, want].
  bool expires_in(const std::string& key, std::int64_t want) {
    auto t = pttl(key);
    return t > want - 60'000 && t <= want;
  }
  std::int64_t layers(const std::string& name) {
    auto r = conn.command({"HGET", keys.object("bloom", name), "layers"});
    return std::stoll(rcoord::reply_string(r.get()));
  }
};

std::vector<std::string> numbered(std::size_t from, std::size_t to) {
  std::vector<std::string> out;
  for (std::size_t i = from; i < to; ++i) out.push_back("item-" + std::to_string(i));
  return out;
}

void add_items(rcoord::Connection& conn, const rcoord::Keys& keys, const std::string& name,
               const std::vector<std::string>& items, Millis expire) {
  bloom::Adder adder(conn, keys, name, expire);
  for (std::size_t i = 0; i < items.size(); i += bloom::kBatchSize) {
    std::vector<std::string> batch(
        items.begin() + static_cast<std::ptrdiff_t>(i),
        items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), i + bloom::kBatchSize)));
    adder.add(batch);
  }
  adder.finish();
}

}  // namespace

TEST_CASE_FIXTURE(Fixture, "the lifecycle scripts load under their embedded SHA1") {
  for (const auto* s : {&rcoord::lua::kBloomExpire, &rcoord::lua::kPfAdd, &rcoord::lua::kPfMerge,
                        &rcoord::lua::kRm}) {
    auto r = conn.command({"SCRIPT", "LOAD", std::string(s->body)});
    CHECK(rcoord::reply_string(r.get()) == s->sha1);
  }
}

TEST_CASE_FIXTURE(Fixture, "bloom: every layer carries the expiry, layers added later too") {
  bloom::ReserveOptions opts;
  opts.capacity = 10;
  opts.expire = Millis(kHour);
  REQUIRE(bloom::reserve(conn, keys, "f", opts).reserved);
  CHECK(expires_in(keys.object("bloom", "f"), kHour));
  CHECK(expires_in(keys.aux("bloom", "f", "0"), kHour));
  CHECK(bloom::info(conn, keys, "f").expires_in_ms > kHour - 60'000);

  add_items(conn, keys, "f", numbered(0, 300), Millis{0});  // grows layers, no --expire
  auto n = layers("f");
  REQUIRE(n >= 3);
  for (std::int64_t i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(expires_in(keys.aux("bloom", "f", std::to_string(i)), kHour));
  }
  add_items(conn, keys, "f", numbered(300, 600), Millis(2 * kHour));
  n = layers("f");
  CHECK(expires_in(keys.object("bloom", "f"), 2 * kHour));
  for (std::int64_t i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(expires_in(keys.aux("bloom", "f", std::to_string(i)), 2 * kHour));
  }

  // A filter without --expire has none, and info says so.
  add_items(conn, keys, "plain", {"a"}, Millis{0});
  CHECK(pttl(keys.object("bloom", "plain")) == -1);
  CHECK(bloom::info(conn, keys, "plain").expires_in_ms == -1);
  // One created by add --expire is born with it.
  add_items(conn, keys, "born", {"a"}, Millis(kHour));
  CHECK(expires_in(keys.object("bloom", "born"), kHour));
  CHECK(expires_in(keys.aux("bloom", "born", "0"), kHour));
}

TEST_CASE_FIXTURE(Fixture, "bloom: a layer a writer recreates after the filter ended is dropped") {
  add_items(conn, keys, "gone", {"a"}, Millis{0});
  // The filter ends (expiry, rm) while a writer's BITFIELD is on its way: the BITFIELD makes
  // the layer again, without metadata or expiry. The grant that follows every batch of sets
  // finds no metadata, and drops that layer.
  conn.command({"DEL", keys.object("bloom", "gone")});
  conn.command({"SETBIT", keys.aux("bloom", "gone", "0"), "7", "1"});
  auto r = rcoord::eval(conn, rcoord::lua::kBloomGrant,
                        {keys.object("bloom", "gone"), keys.aux("bloom", "gone", "1"),
                         keys.aux("bloom", "gone", "0")},
                        {"0", "0", "1", "0", "1", "20", "200", "7"});
  CHECK(bloom::decode_grant(r.get())[0] == -2);
  CHECK(pttl(keys.aux("bloom", "gone", "0")) == -2);
}

TEST_CASE_FIXTURE(Fixture, "pf add and merge with an expiry; without, the expiry stays") {
  rcoord::pf::Adder adder(conn, keys, "day", Millis(kHour));
  adder.add(numbered(0, 5000));
  CHECK(adder.finish().changed);
  CHECK(expires_in(keys.object("pf", "day"), kHour));
  CHECK(rcoord::pf::count(conn, keys, {"day"}).count > 4800);
  rcoord::pf::Adder plain(conn, keys, "day");
  plain.add({"x"});
  plain.finish();
  CHECK(expires_in(keys.object("pf", "day"), kHour));

  auto m = rcoord::pf::merge(conn, keys, "week", {"day"}, Millis(2 * kHour));
  CHECK(m.count > 4800);
  CHECK(expires_in(keys.object("pf", "week"), 2 * kHour));
  rcoord::pf::merge(conn, keys, "week", {"day"});
  CHECK(expires_in(keys.object("pf", "week"), 2 * kHour));
  conn.command({"RPUSH", keys.object("pf", "list"), "x"});
  CHECK_THROWS_AS(rcoord::pf::merge(conn, keys, "list", {"day"}, Millis(kHour)), rcoord::Error);
}

TEST_CASE_FIXTURE(Fixture, "complete: index and scores end together") {
  rcoord::complete::AddOptions opts;
  opts.expire = Millis(kHour);
  rcoord::complete::add(conn, keys, "idx", {"Paris"}, opts);
  CHECK(expires_in(keys.object("complete", "idx"), kHour));
  rcoord::complete::AddOptions incr;
  incr.incr = true;
  rcoord::complete::add(conn, keys, "idx", {"Rome"}, incr);  // creates the scores, no --expire
  CHECK(expires_in(keys.aux("complete", "idx", "scores"), kHour));
  CHECK(expires_in(keys.object("complete", "idx"), kHour));
  rcoord::complete::recent_push(conn, keys, "r", "a", 10, Millis(kHour));
  CHECK(expires_in(keys.object("recent", "r"), kHour));
  rcoord::complete::recent_push(conn, keys, "r", "b", 10);
  CHECK(expires_in(keys.object("recent", "r"), kHour));
}

TEST_CASE_FIXTURE(Fixture, "rm: refuses a held lock, --force keeps the fence counting") {
  auto first = rcoord::lock::acquire(conn, keys, "l", {});
  REQUIRE(first.acquired);
  auto refused = removal::remove(conn, keys, "lock", "l", {});
  CHECK_FALSE(refused.removed);
  CHECK(refused.reason.find("held") != std::string::npos);
  auto dry = removal::remove(conn, keys, "lock", "l", {true, true});
  CHECK(dry.would_remove);
  CHECK_FALSE(dry.removed);
  CHECK(rcoord::lock::status(conn, keys, "l").held);
  auto forced = removal::remove(conn, keys, "lock", "l", {true, false});
  CHECK(forced.removed);
  CHECK_FALSE(rcoord::lock::status(conn, keys, "l").held);
  CHECK(removal::only_counters_left(conn, keys, "lock", "l"));
  auto again = rcoord::lock::acquire(conn, keys, "l", {});
  REQUIRE(again.acquired);
  CHECK(again.fence > first.fence);
  CHECK_FALSE(removal::only_counters_left(conn, keys, "lock", "l"));
  auto absent = removal::remove(conn, keys, "lock", "never", {});
  CHECK(absent.absent);
  CHECK_FALSE(absent.removed);
}

TEST_CASE_FIXTURE(Fixture, "rm: an election's term keeps counting") {
  rcoord::elect::CampaignOptions opts;
  opts.id = "a";
  auto first = rcoord::elect::campaign(conn, keys, "e", opts);
  REQUIRE(first.leader);
  CHECK_FALSE(removal::remove(conn, keys, "elect", "e", {}).removed);
  CHECK(removal::remove(conn, keys, "elect", "e", {true, false}).removed);
  opts.id = "b";
  auto second = rcoord::elect::campaign(conn, keys, "e", opts);
  REQUIRE(second.leader);
  CHECK(second.term > first.term);
}

TEST_CASE_FIXTURE(Fixture, "rm: a Bloom filter goes whole, every layer counted") {
  bloom::ReserveOptions opts;
  opts.capacity = 10;
  REQUIRE(bloom::reserve(conn, keys, "f", opts).reserved);
  add_items(conn, keys, "f", numbered(0, 100), Millis{0});
  auto n = layers("f");
  REQUIRE(n >= 2);
  auto r = removal::remove(conn, keys, "bloom", "f", {});
  CHECK(r.removed);
  CHECK(r.keys == n + 1);
  for (std::int64_t i = 0; i < n; ++i) {
    CHECK(pttl(keys.aux("bloom", "f", std::to_string(i))) == -2);
  }
  CHECK_FALSE(bloom::info(conn, keys, "f").exists);
}
