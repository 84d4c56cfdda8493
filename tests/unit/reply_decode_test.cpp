// The primitives' reply decoders, on replies that ReplyParser builds from RESP text:
// the fields land where they belong, and a reply of another shape is Error(kServer).

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "bloom.hpp"
#include "complete.hpp"
#include "elect.hpp"
#include "errors.hpp"
#include "latch.hpp"
#include "limit.hpp"
#include "parsed_reply.hpp"
#include "queue.hpp"
#include "reply.hpp"
#include "semaphore.hpp"

using namespace rcoord;
using namespace std::string_literals;

TEST_CASE("a semaphore status reply gives limit, use, waiters and every holder") {
  Reply r = parse(
      "*9\r\n:3\r\n:2\r\n:1\r\n$3\r\ntok\r\n:2\r\n:1500\r\n"
      "$15\r\nh\x1f"
      "42\x1fu\x1f"
      "cmd\x1fnote\r\n:1000\r\n:250\r\n");
  semaphore::Status s = semaphore::decode_status(r.get());
  CHECK(s.limit == 3);
  CHECK(s.in_use == 2);
  CHECK(s.waiting == 1);
  REQUIRE(s.holders.size() == 1);
  CHECK(s.holders[0].token == "tok");
  CHECK(s.holders[0].permits == 2);
  CHECK(s.holders[0].ttl_ms == 1500);
  CHECK(s.holders[0].taker.who.host == "h");
  CHECK(s.holders[0].taker.who.pid == 42);
  CHECK(s.holders[0].taker.who.note == "note");
  CHECK(s.holders[0].taker.acquired_at == 1000);
  CHECK(s.holders[0].taker.held_ms == 250);
  // the reply of an older sem_status (three fields a holder) is refused, not misread
  CHECK(error_of([] {
          semaphore::decode_status(
              parse("*6\r\n:3\r\n:2\r\n:1\r\n$3\r\ntok\r\n:2\r\n:1500\r\n").get());
        }) == kServer);
  CHECK(error_of([] { semaphore::decode_status(parse("*4\r\n:3\r\n:2\r\n:1\r\n:0\r\n").get()); }) ==
        kServer);
}

TEST_CASE("a semaphore take reply reads the permits only when acquired") {
  semaphore::Taken t;
  semaphore::decode_take(parse("*4\r\n:0\r\n:2\r\n:3\r\n:1\r\n").get(), t);
  CHECK_FALSE(t.acquired);
  CHECK(t.ahead == 1);
  semaphore::decode_take(parse("*5\r\n:1\r\n:3\r\n:3\r\n:0\r\n:2\r\n").get(), t);
  CHECK(t.acquired);
  CHECK(t.permits == 2);
}

TEST_CASE("a limit decision rounds µs up to ms, also near INT64_MAX") {
  Reply r =
      parse("*9\r\n:0\r\n:10\r\n:0\r\n:1001\r\n:9223372036854775807\r\n:0\r\n:5\r\n:6\r\n:7\r\n");
  limit::Raw raw = limit::decode_raw(r.get());
  CHECK(raw.now_us == 5);
  CHECK(raw.slot == 7);
  limit::Decision d = limit::to_decision(raw);
  CHECK(d.retry_after_ms == 2);
  CHECK(d.reset_after_ms == 9223372036854776);
  CHECK(limit::ceil_ms(-1) == -1);
  CHECK(limit::ceil_ms(1000) == 1);
  CHECK(error_of([] { limit::decode_raw(parse("*2\r\n:1\r\n:2\r\n").get()); }) == kServer);
}

TEST_CASE("limit reply over several rates: the whole answer, then 9 fields per rate") {
  Reply r = parse(
      "*19\r\n:0\r\n"
      ":1\r\n:5\r\n:3\r\n:0\r\n:24000\r\n:0\r\n:9\r\n:9\r\n:0\r\n"
      ":0\r\n:2\r\n:0\r\n:1800000\r\n:3600000\r\n:0\r\n:9\r\n:0\r\n:0\r\n");
  auto raws = limit::decode_multi(r.get(), 2);
  REQUIRE(raws.size() == 2);
  CHECK(raws[0].allowed);
  CHECK(raws[0].limit == 5);
  CHECK(raws[0].remaining == 3);
  CHECK(raws[0].reset_after_us == 24000);
  CHECK_FALSE(raws[1].allowed);
  CHECK(raws[1].limit == 2);
  CHECK(raws[1].retry_after_us == 1800000);
  CHECK(raws[1].now_us == 9);
  // a reply for another number of rates is refused
  CHECK(error_of([&] { limit::decode_multi(r.get(), 3); }) == kServer);
  CHECK(error_of([] { limit::decode_multi(parse(":1\r\n").get(), 1); }) == kServer);
}

TEST_CASE("elect and latch replies") {
  elect::Campaign c;
  elect::decode_campaign(parse("*4\r\n:1\r\n:7\r\n:-5\r\n$1\r\na\r\n").get(), c);
  CHECK(c.leader);
  CHECK(c.term == 7);
  CHECK(c.ttl_ms == 0);  // a negative lease reads as none left
  CHECK(c.leader_id == "a");
  elect::Status s =
      elect::decode_status(parse("*6\r\n$0\r\n\r\n:4\r\n:0\r\n$0\r\n\r\n:-1\r\n:-1\r\n").get());
  CHECK_FALSE(s.leader);
  CHECK(s.term == 4);
  CHECK_FALSE(s.holder.known());
  latch::Initialized l = latch::decode_init(parse("*2\r\n:1\r\n:3\r\n").get());
  CHECK(l.created);
  CHECK(l.count == 3);
  CHECK(error_of([] { latch::decode_init(parse(":1\r\n").get()); }) == kServer);
}

TEST_CASE("queue replies: pop's due time and messages, stats") {
  std::vector<queue::Message> messages;
  std::int64_t next =
      queue::decode_pop(parse("*4\r\n:-1\r\n$1\r\n9\r\n$3\r\njob\r\n:2\r\n").get(), messages);
  CHECK(next == -1);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].id == "9");
  CHECK(messages[0].message == "job");
  CHECK(messages[0].attempt == 2);
  queue::Stats st = queue::decode_stats(parse("*4\r\n:1\r\n:2\r\n:3\r\n:4\r\n").get());
  CHECK(st.dead == 4);
  CHECK(error_of([] { queue::decode_messages(parse("*2\r\n:1\r\n:2\r\n").get(), "queue_peek"); }) ==
        kServer);
  CHECK(error_of([] {
          queue::decode_messages(parse("*3\r\n*0\r\n$1\r\na\r\n:1\r\n").get(), "q");
        }) == kServer);
}

TEST_CASE("complete suggestions need rcoord's member form") {
  complete::Suggestions s;
  complete::decode_suggest(parse("*3\r\n:1\r\n$7\r\napple\0A\r\n$3\r\n2.5\r\n"s).get(), "k", s);
  CHECK(s.scored);
  REQUIRE(s.terms.size() == 1);
  CHECK(s.terms[0].term == "A");
  CHECK(s.terms[0].score == 2.5);
  complete::Suggestions bad;
  CHECK(error_of([&] {
          complete::decode_suggest(parse("*3\r\n:0\r\n$5\r\napple\r\n$1\r\n0\r\n").get(), "k", bad);
        }) == kServer);
}

TEST_CASE("bloom metadata with an error rate outside (0, 1) is refused") {
  auto meta_reply = [](const std::string& rate) {
    std::string fields[] = {"layers",     "1",         "capacity", "100",     "error_rate",
                            rate,         "expansion", "2",        "items",   "0",
                            "capacity:0", "100",       "bits:0",   "959",     "hashes:0",
                            "7",          "used:0",    "0",        "items:0", "0"};
    std::string resp = "*20\r\n";
    for (const auto& f : fields) resp += "$" + std::to_string(f.size()) + "\r\n" + f + "\r\n";
    return parse(resp);
  };
  Reply hash = parse("+hash\r\n");
  bloom::Meta meta;
  CHECK(bloom::decode_meta(hash.get(), meta_reply("0.01").get(), "k", meta));
  CHECK(meta.error_rate == 0.01);
  REQUIRE(meta.layers.size() == 1);
  CHECK(meta.layers[0].bits == 959);
  for (const char* bad : {"nan", "0", "1", "-0.5", "inf"}) {
    CAPTURE(bad);
    CHECK(error_of([&] { bloom::decode_meta(hash.get(), meta_reply(bad).get(), "k", meta); }) ==
          kServer);
  }
}
