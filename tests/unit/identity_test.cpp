// Holder identity (SPEC §5): what a take records of its process, packed for a script's ARGV
// and read back; the timestamps and client names the status verbs and connections show.

#include "identity.hpp"

#include <doctest/doctest.h>
#include <pwd.h>
#include <unistd.h>

#include <array>
#include <string>

#include "duration.hpp"

using rcoord::Identity;

TEST_CASE("an identity packed and unpacked is the same, control bytes made spaces") {
  Identity who{"web-3", 4242, "backup", "backup.sh", "ticket OPS-7"};
  Identity back = rcoord::unpack(rcoord::pack(who));
  CHECK(back.host == "web-3");
  CHECK(back.pid == 4242);
  CHECK(back.user == "backup");
  CHECK(back.cmd == "backup.sh");
  CHECK(back.note == "ticket OPS-7");
  // A separator or newline inside a field cannot shift the fields after it.
  Identity tricky{"h", 1, "u", "c",
                  "a\x1f"
                  "b\nc\td"};
  Identity read = rcoord::unpack(rcoord::pack(tricky));
  CHECK(read.note == "a b c d");
  CHECK(read.host == "h");
  CHECK(rcoord::unpack("").host.empty());
  CHECK(rcoord::unpack("not packed").pid == 0);
}

TEST_CASE("a trace id is packed last, and only when there is one") {
  Identity who{"web-3", 4242, "backup", "backup.sh", ""};
  CHECK(rcoord::unpack(rcoord::pack(who)).trace_id.empty());
  CHECK(rcoord::pack(who).find("4bf92f") == std::string::npos);
  who.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  Identity back = rcoord::unpack(rcoord::pack(who));
  CHECK(back.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(back.note.empty());
  CHECK(back.cmd == "backup.sh");
}

TEST_CASE("trace_id_of reads a W3C traceparent and refuses anything else") {
  using rcoord::trace_id_of;
  const std::string id = "4bf92f3577b34da6a3ce929d0e0e4736";
  CHECK(trace_id_of("00-" + id + "-00f067aa0ba902b7-01") == id);
  CHECK(trace_id_of("00-" + id + "-00f067aa0ba902b7-00") == id);
  // A later version may carry more fields after a dash; version 00 may not.
  CHECK(trace_id_of("01-" + id + "-00f067aa0ba902b7-01-extra") == id);
  CHECK_FALSE(trace_id_of("00-" + id + "-00f067aa0ba902b7-01-extra"));
  CHECK_FALSE(trace_id_of("01-" + id + "-00f067aa0ba902b7-01extra"));
  CHECK_FALSE(trace_id_of("ff-" + id + "-00f067aa0ba902b7-01"));  // forbidden version
  CHECK_FALSE(trace_id_of("00-00000000000000000000000000000000-00f067aa0ba902b7-01"));
  CHECK_FALSE(trace_id_of("00-" + id + "-0000000000000000-01"));  // zero parent
  CHECK_FALSE(trace_id_of("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"));
  CHECK_FALSE(trace_id_of("00-" + id + "-00f067aa0ba902b7"));  // no flags
  CHECK_FALSE(trace_id_of("00_" + id + "-00f067aa0ba902b7-01"));
  CHECK_FALSE(trace_id_of("00-" + id + "-00f067aa0ba902g7-01"));
  CHECK_FALSE(trace_id_of(""));
}

TEST_CASE("this process: its pid and host, the cmd and note given") {
  Identity me = rcoord::this_process("lock acquire", "n");
  CHECK(me.pid == static_cast<std::int64_t>(getpid()));
  CHECK_FALSE(me.host.empty());
  CHECK_FALSE(me.user.empty());
  CHECK(me.cmd == "lock acquire");
  CHECK(me.note == "n");
  rcoord::Holder h{me, 1, 2};
  CHECK(h.known());
  CHECK_FALSE(rcoord::Holder{}.known());
}

TEST_CASE("a run form's cmd is its program's basename, never an argument") {
  CHECK(rcoord::command_basename("/opt/bin/backup.sh") == "backup.sh");
  CHECK(rcoord::command_basename("backup.sh") == "backup.sh");
  CHECK(rcoord::command_basename("./x/") == "x");
  CHECK(rcoord::command_basename("/") == "/");
}

TEST_CASE("timestamps are RFC 3339 UTC with milliseconds") {
  CHECK(rcoord::rfc3339(0) == "1970-01-01T00:00:00.000Z");
  CHECK(rcoord::rfc3339(1795572003120) == "2026-11-25T02:00:03.120Z");
}

TEST_CASE("a client name keeps to the bytes Redis takes, and to 128 bytes") {
  CHECK(rcoord::client_name("lock-acquire:nightly") == "rcoord:lock-acquire:nightly");
  CHECK(rcoord::client_name("lock-acquire:a b\nc\xc3\xa9") == "rcoord:lock-acquire:a_b_c__");
  CHECK(rcoord::client_name(std::string(500, 'x')).size() == rcoord::kMaxClientName);
}

TEST_CASE("elapsed times read as an operator reads them") {
  using rcoord::Millis;
  CHECK(rcoord::format_elapsed(Millis(12'345)) == "12.3s");
  CHECK(rcoord::format_elapsed(Millis(870'000)) == "14m30s");
  CHECK(rcoord::format_elapsed(Millis(3 * 3'600'000 + 5 * 60'000)) == "3h05m");
  CHECK(rcoord::format_elapsed(Millis(2 * 86'400'000 + 4 * 3'600'000)) == "2d04h");
  CHECK(rcoord::format_elapsed(Millis(-5)) == "0.0s");
}

TEST_CASE("a uid with no passwd entry is recorded as its number") {
  // No entry anywhere the C library looks (a container's runAsUser): never an error.
  constexpr uid_t kNobodyKnows = 2'000'000'123;
  passwd* found = getpwuid(kNobodyKnows);
  REQUIRE(found == nullptr);
  CHECK(rcoord::user_name(kNobodyKnows) == "uid 2000000123");
  CHECK(rcoord::user_name(0) == "root");
}

TEST_CASE("this process's user: what the C library says") {
  std::array<char, 4096> buf{};
  passwd entry{};
  passwd* found = nullptr;
  REQUIRE(getpwuid_r(geteuid(), &entry, buf.data(), buf.size(), &found) == 0);
  std::string expected = found != nullptr ? found->pw_name : "uid " + std::to_string(geteuid());
  CHECK(rcoord::this_process("x", "").user == expected);
}
