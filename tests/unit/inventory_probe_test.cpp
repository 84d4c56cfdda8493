// The listing's plain reads (src/inventory_probe.hpp), fed replies that ReplyParser builds
// from RESP text: each round asks for what the replies before it showed is there, and the
// state decoded is what the type's status script would have answered; an impossible mix of
// replies (a holder whose hash is gone) reads as free, a foreign hash as an Error(kServer).

#include "inventory_probe.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "errors.hpp"
#include "identity.hpp"
#include "parsed_reply.hpp"
#include "reply.hpp"

using namespace rcoord;
using namespace rcoord::inventory::reads;
using namespace std::string_literals;

namespace {

constexpr std::int64_t kNow = 1'764'000'010'000;

// One round: the replies, in RESP, to each of the reading's commands.
template <typename Status>
Reading<Status> answer(const Reading<Status>& reading, const std::vector<std::string>& resp) {
  REQUIRE(reading.commands.size() == resp.size());
  std::vector<Reply> replies;
  for (const auto& r : resp) replies.push_back(parse(r));
  return reading.then(replies);
}

std::string bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

const std::string kNil = "$-1\r\n";
const std::string kEmpty = "*0\r\n";
std::string integer(std::int64_t n) { return ":" + std::to_string(n) + "\r\n"; }

}  // namespace

TEST_CASE("a taker's record reads back as its identity and how long ago it took") {
  Identity who{"web-3", 4242, "backup", "lock acquire", ""};
  Holder h = holder_of(pack(who) + "\x1f" + std::to_string(kNow - 1500), kNow);
  CHECK(h.who.host == "web-3");
  CHECK(h.who.pid == 4242);
  CHECK(h.acquired_at == kNow - 1500);
  CHECK(h.held_ms == 1500);
  CHECK_FALSE(holder_of("", kNow).known());
  CHECK(holder_of("no separator", kNow).acquired_at == -1);
  CHECK(holder_of("x\x1f"
                  "12a",
                  kNow)
            .acquired_at == -1);
}

TEST_CASE("a held lock is read in one round when nobody waits") {
  Keys keys;
  auto r = read_lock(keys, "deploy", kNow);
  REQUIRE(r.commands.size() == 3);
  CHECK(r.commands[0][0] == "HMGET");
  CHECK(r.commands[0][1] == "rcoord:{lock:deploy}");
  std::string who = pack(Identity{"h", 7, "u", "lock acquire", ""});
  auto done = answer(r, {"*6\r\n" + bulk("tok") + bulk(who) + bulk(std::to_string(kNow - 2000)) +
                             bulk("42") + kNil + kNil,
                         integer(5000), integer(0)});
  REQUIRE(done.commands.empty());
  REQUIRE(done.status);
  const lock::Status& s = *done.status;
  CHECK(s.held);
  CHECK(s.mode == "exclusive");
  CHECK(s.token == "tok");
  CHECK(s.fence == 42);
  CHECK(s.ttl_ms == 5000);
  CHECK(s.held_ms == 2000);
  CHECK(s.holder.who.user == "u");
  CHECK(s.waiting == 0);
  CHECK_FALSE(s.kept.kept());
}

TEST_CASE("a held lock with waiters counts the live ones, and a kept take says since when") {
  Keys keys;
  auto r = read_lock(keys, "deploy", kNow);
  auto more = answer(r, {"*6\r\n" + bulk("tok") + kNil + kNil + bulk("3") +
                             bulk(std::to_string(kNow - 300)) + bulk("1"),
                         integer(900), integer(2)});
  REQUIRE(more.commands.size() == 2);
  CHECK(more.commands[0] ==
        Args{"ZCOUNT", "rcoord:{lock:deploy}:writers", "(" + std::to_string(kNow), "+inf"});
  auto done = answer(more, {integer(2), integer(1)});
  REQUIRE(done.status);
  CHECK(done.status->waiting == 3);
  CHECK(done.status->held_ms == -1);  // no acquired_at: an older take
  CHECK(done.status->kept.ended_ms == 300);
  CHECK(done.status->kept.exit_code == 1);
}

TEST_CASE("a lock whose hash ended between two reads is read as free") {
  Keys keys;
  auto r = read_lock(keys, "l", kNow);
  auto free_round = answer(
      r, {"*6\r\n" + bulk("tok") + kNil + kNil + bulk("3") + kNil + kNil, integer(-2), integer(0)});
  REQUIRE(free_round.commands.size() == 7);
  auto done = answer(free_round,
                     {bulk("9"), integer(0), kEmpty, kEmpty, integer(0), integer(0), integer(1)});
  REQUIRE(done.status);
  CHECK_FALSE(done.status->held);
  CHECK(done.status->mode.empty());
  CHECK(done.status->fence == 9);
}

TEST_CASE("a lock of which only its fence is left is no object") {
  Keys keys;
  auto r = read_lock(keys, "gone", kNow);
  auto free_round =
      answer(r, {"*6\r\n" + kNil + kNil + kNil + kNil + kNil + kNil, integer(-2), integer(0)});
  auto done = answer(free_round,
                     {bulk("9"), integer(0), kEmpty, kEmpty, integer(0), integer(0), integer(0)});
  CHECK(done.commands.empty());
  CHECK_FALSE(done.status);
}

TEST_CASE("a shared lock lists its readers with their takers and kept marks") {
  Keys keys;
  auto r = read_lock(keys, "rw", kNow);
  auto free_round =
      answer(r, {"*6\r\n" + kNil + kNil + kNil + kNil + kNil + kNil, integer(-2), integer(0)});
  std::string d1 = std::to_string(kNow + 1000);
  std::string d2 = std::to_string(kNow + 4000);
  auto readers = answer(
      free_round, {bulk("5"), integer(2), "*4\r\n" + bulk("r1") + bulk(d1) + bulk("r2") + bulk(d2),
                   "*2\r\n" + bulk("r2") + bulk(d2), integer(0), integer(1), integer(3)});
  REQUIRE(readers.commands.size() == 1);
  CHECK(readers.commands[0] ==
        Args{"HMGET", "rcoord:{lock:rw}:rwho", "r1", "r1\x1fkept", "r2", "r2\x1fkept"});
  auto done = answer(readers, {"*4\r\n" + bulk("\x1f" + std::to_string(kNow - 10)) + kNil + kNil +
                               bulk(std::to_string(kNow - 50) + "\x1f" + "0")});
  REQUIRE(done.status);
  const lock::Status& s = *done.status;
  CHECK(s.mode == "shared");
  CHECK(s.readers == 2);
  CHECK(s.fence == 5);
  CHECK(s.ttl_ms == 4000);
  CHECK(s.waiting == 1);
  REQUIRE(s.reader_list.size() == 2);
  CHECK(s.reader_list[0].ttl_ms == 1000);
  CHECK(s.reader_list[0].holder.held_ms == 10);
  CHECK_FALSE(s.reader_list[0].kept.kept());
  CHECK(s.reader_list[1].kept.ended_ms == 50);
  CHECK(s.reader_list[1].kept.exit_code == 0);
}

TEST_CASE("a hash without a token where a lock is kept is refused, not read as free") {
  Keys keys;
  auto r = read_lock(keys, "x", kNow);
  CHECK(error_of([&] {
          answer(r, {"*6\r\n" + kNil + kNil + kNil + kNil + kNil + kNil, integer(-1), integer(0)});
        }) == kServer);
}

TEST_CASE("a semaphore: its live holders' permits and takers in a second round") {
  Keys keys;
  auto r = read_sem(keys, "slots", kNow);
  REQUIRE(r.commands.size() == 3);
  auto holders = answer(r, {"*4\r\n" + bulk("a") + bulk(std::to_string(kNow + 700)) + bulk("b") +
                                bulk(std::to_string(kNow + 300)),
                            bulk("4"), integer(1)});
  REQUIRE(holders.commands.size() == 2);
  auto done = answer(holders, {"*2\r\n" + bulk("2") + kNil, "*2\r\n" + kNil + kNil});
  REQUIRE(done.status);
  const semaphore::Status& s = *done.status;
  CHECK(s.limit == 4);
  CHECK(s.waiting == 1);
  CHECK(s.in_use == 3);  // a holder without a permits field holds one
  REQUIRE(s.holders.size() == 2);
  CHECK(s.holders[0].permits == 2);
  CHECK(s.holders[1].ttl_ms == 300);
}

TEST_CASE("a semaphore with nothing live asks whether anything but its history is left") {
  Keys keys;
  auto r = read_sem(keys, "old", kNow);
  auto presence = answer(r, {kEmpty, kNil, integer(0)});
  REQUIRE(presence.commands.size() == 1);
  CHECK(presence.commands[0][0] == "EXISTS");
  CHECK_FALSE(answer(presence, {integer(0)}).status);
  auto left = answer(presence, {integer(1)});
  REQUIRE(left.status);
  CHECK(left.status->in_use == 0);
}

TEST_CASE("an election: its leader, or the last term without one") {
  Keys keys;
  auto r = read_elect(keys, "svc", kNow);
  auto led =
      answer(r, {"*4\r\n" + bulk("host-a") + bulk("17") + kNil + bulk(std::to_string(kNow - 4000)),
                 integer(6000)});
  REQUIRE(led.status);
  CHECK(led.status->leader);
  CHECK(led.status->id == "host-a");
  CHECK(led.status->term == 17);
  CHECK(led.status->ttl_ms == 6000);
  CHECK(led.status->holder.held_ms == 4000);
  auto vacant = answer(r, {"*4\r\n" + kNil + kNil + kNil + kNil, integer(-2)});
  REQUIRE(vacant.commands.size() == 2);
  auto done = answer(vacant, {bulk("17"), integer(1)});
  REQUIRE(done.status);
  CHECK_FALSE(done.status->leader);
  CHECK(done.status->term == 17);
  CHECK(error_of([&] {
          answer(r, {"*4\r\n" + kNil + kNil + kNil + kNil, integer(-1)});
        }) == kServer);
}

TEST_CASE("a queue counts what is due as ready, and a lapsed last delivery as dead") {
  Keys keys;
  auto r = read_queue(keys, "jobs", kNow);
  auto simple = answer(r, {integer(2), integer(0), integer(0), integer(0)});
  REQUIRE(simple.status);
  CHECK(simple.status->ready == 2);
  auto due = answer(r, {integer(1), integer(3), integer(2), integer(1)});
  REQUIRE(due.commands.size() == 3);
  auto attempts = answer(due, {integer(1), integer(2), "*2\r\n" + bulk("m1") + bulk("m2")});
  REQUIRE(attempts.commands.size() == 1);
  CHECK(attempts.commands[0] == Args{"HMGET", "rcoord:{queue:jobs}:attempts", "m1", "m2"});
  auto done = answer(attempts, {"*2\r\n" + bulk("3/3") + bulk("1/3")});
  REQUIRE(done.status);
  CHECK(done.status->ready == 3);  // 1 + 1 due + 1 lapsed
  CHECK(done.status->delayed == 2);
  CHECK(done.status->in_flight == 0);
  CHECK(done.status->dead == 2);
}

TEST_CASE("a latch: its count, gone, or a foreign hash refused") {
  Keys keys;
  auto r = read_latch(keys, "ci", kNow);
  auto counted = answer(r, {bulk("3")});
  REQUIRE(counted.status);
  CHECK(counted.status->found);
  CHECK(counted.status->count == 3);
  auto missing = answer(r, {kNil});
  REQUIRE(missing.commands == std::vector<Args>{{"EXISTS", "rcoord:{latch:ci}"}});
  auto gone = answer(missing, {integer(0)});
  REQUIRE(gone.status);
  CHECK_FALSE(gone.status->found);
  CHECK(error_of([&] { answer(missing, {integer(1)}); }) == kServer);
}

TEST_CASE("TIME's reply is the server's clock in ms") {
  CHECK(server_ms(parse("*2\r\n" + bulk("1764000010") + bulk("123456")).get()) ==
        1'764'000'010'123);
  CHECK(error_of([] { server_ms(parse(integer(1)).get()); }) == kServer);
}
