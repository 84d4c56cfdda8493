// The printers' views of queue results: JSON fields of SPEC "queue", byte-exact text records.

#include <doctest/doctest.h>

#include <string>

#include "output.hpp"
#include "queue_command.hpp"
#include "text.hpp"

namespace queue = rcoord::queue;
using rcoord::base64;

namespace {

std::string message_json(const queue::Message& m) {
  nlohmann::ordered_json j;
  to_json(j, m);
  return rcoord::dump_json(j);
}

// Standard base64 decoding, to check the encoder against an independent reading.
std::string unbase64(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    bits = bits << 6 | static_cast<std::uint32_t>(alphabet.find(c));
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>(bits >> count & 0xff);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a popped message is {id, message, attempt}") {
  CHECK(message_json({"17", "resize 1.jpg", 2}) ==
        R"({"id":"17","message":"resize 1.jpg","attempt":2})");
}

TEST_CASE("UTF-8 text, control characters and NUL stay exact in JSON") {
  std::string text("z\xc3\xbcrich\n\t\0end", 13);
  auto j = nlohmann::json::parse(message_json({"1", text, 1}));
  CHECK(j["message"].get<std::string>() == text);
  CHECK_FALSE(j.contains("message_base64"));
}

TEST_CASE("bytes that are not UTF-8 come with message_base64, exact") {
  std::string bytes("\x00\xff\xfe\n\x01", 5);
  auto line = message_json({"3", bytes, 1});
  CHECK(line ==
        R"({"id":"3","message":"\u0000��\n\u0001","message_base64":"AP/+CgE=","attempt":1})");
  auto j = nlohmann::json::parse(line);
  CHECK(unbase64(j["message_base64"].get<std::string>()) == bytes);
}

TEST_CASE("base64 follows RFC 4648") {
  CHECK(base64("") == "");
  CHECK(base64("f") == "Zg==");
  CHECK(base64("fo") == "Zm8=");
  CHECK(base64("foo") == "Zm9v");
  CHECK(base64("foobar") == "Zm9vYmFy");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  CHECK(unbase64(base64(all)) == all);
}

TEST_CASE("text records: raw bytes and a terminator, or a header with the size first") {
  std::vector<queue::Message> ms{{"1", "a\nb", 1}, {"2", "", 3}};
  CHECK(queue::to_records(ms, {false, '\n'}) == "a\nb\n\n");
  CHECK(queue::to_records(ms, {false, '\0'}) == std::string("a\nb\0\0", 5));
  CHECK(queue::to_records(ms, {true, '\n'}) == "1 1 3\na\nb\n2 3 0\n\n");
}

TEST_CASE("queue stats: the fields of SPEC, as JSON and as field: value lines") {
  queue::Stats s{3, 1, 2, 4};
  nlohmann::ordered_json j;
  to_json(j, s);
  CHECK(j.dump() == R"({"ready":3,"delayed":1,"in_flight":2,"dead":4})");
  CHECK(to_text(s) == "ready: 3\ndelayed: 1\nin_flight: 2\ndead: 4\n");
}

TEST_CASE("push, len, ack, nack, replay and purge views") {
  nlohmann::ordered_json j;
  to_json(j, queue::Pushed{"jobs", 2, 7});
  CHECK(j.dump() == R"({"name":"jobs","pushed":2,"length":7})");
  CHECK(to_text(queue::Pushed{"jobs", 2, 7}) == "7");
  to_json(j, queue::Length{"jobs", 5});
  CHECK(j.dump() == R"({"name":"jobs","length":5})");
  to_json(j, queue::Acked{true, "jobs", "17"});
  CHECK(j.dump() == R"({"acked":true,"name":"jobs","id":"17"})");
  CHECK(to_text(queue::Acked{false, "jobs", "17"}).empty());
  to_json(j, queue::Nacked{"jobs", "17", queue::NackState::kDelayed});
  CHECK(j.dump() == R"({"nacked":true,"name":"jobs","id":"17","state":"delayed"})");
  to_json(j, queue::Nacked{"jobs", "17", queue::NackState::kNotInFlight});
  CHECK(j.dump() == R"({"nacked":false,"name":"jobs","id":"17","state":""})");
  CHECK(to_text(queue::Nacked{"jobs", "17", queue::NackState::kDead}) == "dead");
  to_json(j, queue::Counted{"replayed", "jobs", 3});
  CHECK(j.dump() == R"({"name":"jobs","replayed":3})");
  CHECK(to_text(queue::Counted{"purged", "jobs", 9}) == "9");
}
