// Errors of Lua scripts and keys of another type reach the user in rcoord's one-line form:
// the object and the key are named, and nothing shows a script's SHA1 or line.

#include <doctest/doctest.h>

#include <string>

#include "errors.hpp"
#include "keys.hpp"
#include "script.hpp"

namespace {

const rcoord::Script kScript{"lock_acquire", "local a = 1\nredis.call('HSET', KEYS[1], 'x', 1)\n",
                             "0123456789abcdef0123456789abcdef01234567", true};
const rcoord::Args kKeys{"rcoord:{lock:job}", "rcoord:{lock:job}:fence", "rcoord:{lock:job}:wake",
                         "rcoord:{lock:job}:readers"};

std::string line_of(const rcoord::Error& e) { return rcoord::format_error(e); }

}  // namespace

TEST_CASE("object_of_key finds the type and name of an rcoord key") {
  auto o = rcoord::object_of_key("rcoord:{lock:job}");
  REQUIRE(o);
  CHECK(o->type == "lock");
  CHECK(o->name == "job");
  o = rcoord::object_of_key("rcoord:{sem:enc}:permits");
  REQUIRE(o);
  CHECK(o->type == "sem");
  CHECK(o->name == "enc");
  // A name may hold braces and colons; a --prefix may hold braces.
  o = rcoord::object_of_key("app{x}:{queue:{a}:b}:ready");
  REQUIRE(o);
  CHECK(o->type == "queue");
  CHECK(o->name == "{a}:b");
  o = rcoord::object_of_key("rcoord:{bloom:f}:12");
  REQUIRE(o);
  CHECK(o->name == "f");
  CHECK_FALSE(rcoord::object_of_key("plain-key"));
  CHECK_FALSE(rcoord::object_of_key("rcoord:{nosuchtype:x}"));
  CHECK_FALSE(rcoord::object_of_key("rcoord:{lock:x}tail"));
  CHECK(rcoord::object_noun("sem") == "semaphore");
  CHECK(rcoord::object_noun("bloom") == "bloom filter");
}

TEST_CASE("foreign_key_error names the object and the key, and says what to do") {
  auto e =
      rcoord::foreign_key_error("rcoord:{sem:enc}:meta", "a list, not the hash rcoord keeps there");
  CHECK(e.code() == rcoord::kServer);
  CHECK(line_of(e) ==
        "rcoord: semaphore 'enc': key 'rcoord:{sem:enc}:meta' holds a list, not the hash rcoord "
        "keeps there (that key is not rcoord's: use another name or --prefix, or delete it if "
        "nothing needs it)");
  e = rcoord::foreign_key_error("other", "a set", "do this");
  CHECK(line_of(e) == "rcoord: key 'other' holds a set (do this)");
}

TEST_CASE("script_error_text drops the script's SHA1 and line") {
  CHECK(rcoord::script_error_text("WRONGTYPE KEYS[4] holds a string, not the zset rcoord keeps "
                                  "there script: 21414dc104ac2503809e817ed69a46ec0db8f0d2, on "
                                  "@user_script:17.") ==
        "WRONGTYPE KEYS[4] holds a string, not the zset rcoord keeps there");
  CHECK(rcoord::script_error_text(
            "ERR user_script:1: Script attempted to access nonexistent "
            "global variable 'x' script: 7c69090d716b3b899dd0365cfdda40b6cf8ae98d"
            ", on @user_script:1.") ==
        "ERR Script attempted to access nonexistent global variable 'x'");
  CHECK(rcoord::script_error_text("OOM command not allowed") == "OOM command not allowed");
}

TEST_CASE("script_error_text reads Redis 6.2's form too: where first, the error after it") {
  const std::string before =
      "ERR Error running script (call to f_21414dc104ac2503809e817ed69a46ec0db8f0d2): ";
  CHECK(rcoord::script_error_text(before + "@user_script:17: WRONGTYPE KEYS[4] holds a string, "
                                           "not the zset rcoord keeps there ") ==
        "WRONGTYPE KEYS[4] holds a string, not the zset rcoord keeps there");
  CHECK(rcoord::script_error_text(before + "@user_script:2: WRONGTYPE Operation against a key "
                                           "holding the wrong kind of value ") ==
        "WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(rcoord::script_error_text(before + "@user_script:1: user_script:1: Script attempted to "
                                           "access nonexistent global variable 'x' ") ==
        "ERR Script attempted to access nonexistent global variable 'x'");
  auto e = rcoord::script_error(
      before +
          "@user_script:2: The user executing the script can't run this command or "
          "subcommand ",
      kScript, kKeys);
  CHECK(line_of(e).find("this user may not run HSET") != std::string::npos);
  e = rcoord::script_error(before +
                               "@user_script:17: WRONGTYPE KEYS[4] holds a string, not the "
                               "zset rcoord keeps there ",
                           kScript, kKeys);
  CHECK(line_of(e).find("rcoord: lock 'job': key 'rcoord:{lock:job}:readers' holds a string") == 0);
}

TEST_CASE("script_error: a refused key is named with its object, without SHA1 or line") {
  auto e = rcoord::script_error(
      "WRONGTYPE KEYS[4] holds a string, not the zset rcoord keeps there script: "
      "21414dc104ac2503809e817ed69a46ec0db8f0d2, on @user_script:17.",
      kScript, kKeys);
  CHECK(e.code() == rcoord::kServer);
  std::string line = line_of(e);
  CHECK(line.find("rcoord: lock 'job': key 'rcoord:{lock:job}:readers' holds a string, not the "
                  "zset rcoord keeps there (") == 0);
  CHECK(line.find("user_script") == std::string::npos);
  CHECK(line.find("21414dc1") == std::string::npos);

  // A hint of the script's own replaces the default one.
  e = rcoord::script_error(
      "WRONGTYPE KEYS[1] holds an rcoord gcra limit, not a fixed-window one (use --algo gcra, "
      "or limit reset) script: 21414dc104ac2503809e817ed69a46ec0db8f0d2, on @user_script:9.",
      kScript, {"rcoord:{limit:api}", "rcoord:{limit:api}:log"});
  CHECK(line_of(e) ==
        "rcoord: limit 'api': key 'rcoord:{limit:api}' holds an rcoord gcra limit, not a "
        "fixed-window one (use --algo gcra, or limit reset)");

  // A WRONGTYPE the script met without checking: the object is named.
  e = rcoord::script_error(
      "WRONGTYPE Operation against a key holding the wrong kind of value script: "
      "21414dc104ac2503809e817ed69a46ec0db8f0d2, on @user_script:2.",
      kScript, kKeys);
  CHECK(line_of(e) ==
        "rcoord: lock 'job': one of its keys holds another type than rcoord keeps there (find it "
        "with redis-cli --scan --pattern 'rcoord:{lock:job}*')");

  // An index past the keys is not trusted.
  e = rcoord::script_error("WRONGTYPE KEYS[9] holds a string", kScript, kKeys);
  CHECK(line_of(e).find("lock 'job': one of its keys") != std::string::npos);
}

TEST_CASE("script_error: other errors keep their kind, without SHA1 or line") {
  auto e = rcoord::script_error(
      "ERR user_script:2: something broke script: 21414dc104ac2503809e817ed69a46ec0db8f0d2, on "
      "@user_script:2.",
      kScript, kKeys);
  CHECK(e.code() == rcoord::kServer);
  CHECK(line_of(e) == "rcoord: script lock_acquire failed: ERR something broke");
  e = rcoord::script_error("NOAUTH Authentication required.", kScript, kKeys);
  CHECK(e.code() == rcoord::kConnection);
  e = rcoord::script_error(
      "ERR The user executing the script can't run this command or subcommand script: "
      "21414dc104ac2503809e817ed69a46ec0db8f0d2, on @user_script:2.",
      kScript, kKeys);
  CHECK(line_of(e).find("this user may not run HSET") != std::string::npos);
  // Redis 7.2 on and Valkey name the command themselves, in lower case.
  e = rcoord::script_error(
      "ERR ACL failure in script: User u has no permissions to run the 'hset' command script: "
      "21414dc104ac2503809e817ed69a46ec0db8f0d2, on @user_script:2.",
      kScript, kKeys);
  CHECK(line_of(e) ==
        "rcoord: script lock_acquire refused by ACL: this user may not run HSET (grant the "
        "rcoord ACL rule to this user (see docs/configuration.md, ACL))");
}

TEST_CASE("refused_by_acl knows every server's words for an ACL refusal") {
  CHECK(rcoord::refused_by_acl("NOPERM this user has no permissions to run the 'multi' command"));
  CHECK(rcoord::refused_by_acl(
      "ERR The user executing the script can't run this command or subcommand script: x"));
  CHECK(
      rcoord::refused_by_acl("ERR ACL failure in script: User u has no permissions to run the "
                             "'bitop' command script: x, on @user_script:3."));
  CHECK_FALSE(rcoord::refused_by_acl("WRONGTYPE Operation against a key"));
  CHECK_FALSE(rcoord::refused_by_acl("EXECABORT Transaction discarded"));
}

TEST_CASE("script_error: a replica, a full server and a broken counter say what to do") {
  const rcoord::Script incr{"lock_acquire",
                            "local a = 1\nlocal fence = redis.call('INCR', KEYS[2])\n",
                            "0123456789abcdef0123456789abcdef01234567", true};
  // Redis 7's form, then 6.2's.
  for (const char* msg :
       {"ERR value is not an integer or out of range script: "
        "21414dc104ac2503809e817ed69a46ec0db8f0d2, on @user_script:2.",
        "ERR Error running script (call to f_21414dc104ac2503809e817ed69a46ec0db8f0d2): "
        "@user_script:2: ERR value is not an integer or out of range"}) {
    CAPTURE(msg);
    auto e = rcoord::script_error(msg, incr, kKeys);
    CHECK(e.code() == rcoord::kServer);
    std::string line = line_of(e);
    CHECK(line.find("lock 'job': key 'rcoord:{lock:job}:fence' does not hold an integer: ") !=
          std::string::npos);
    CHECK(line.find("value is not an integer or out of range") != std::string::npos);
    CHECK(line.find("redis-cli DEL 'rcoord:{lock:job}:fence'") != std::string::npos);
    // A fence counter starts again from the server's clock (src/lua/lib/fence.lua), not from 1.
    CHECK(line.find("taken from the server's clock") != std::string::npos);
    CHECK(line.find("count again from 1") == std::string::npos);
  }
  auto e = rcoord::script_error(
      "READONLY You can't write against a read only replica. script: "
      "21414dc104ac2503809e817ed69a46ec0db8f0d2, on @user_script:2.",
      kScript, kKeys);
  CHECK(e.code() == rcoord::kServer);
  CHECK(line_of(e) ==
        "rcoord: script lock_acquire failed: READONLY You can't write against a read only "
        "replica. (this server is a read-only replica: point --url at its master, or find the "
        "master with --sentinel)");
  e = rcoord::script_error("OOM command not allowed when used memory > 'maxmemory'.", kScript,
                           kKeys);
  CHECK(line_of(e).find("OOM command not allowed when used memory > 'maxmemory'. (the server "
                        "is full and evicts nothing") != std::string::npos);
  CHECK(line_of(e).find("free memory") != std::string::npos);
}
