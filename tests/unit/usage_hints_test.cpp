// What usage errors say beyond CLI11's words (usage_hints.hpp), on rcoord's own command tree,
// and the line that says who holds a busy lock.

#include "usage_hints.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "context.hpp"
#include "errors.hpp"
#include "lock_command.hpp"
#include "queue_command.hpp"
#include "signal_command.hpp"

namespace {

using rcoord::cmd::check_before_parse;
using rcoord::cmd::usage_hint;
using Words = std::vector<std::string>;

// The tree main builds, with the groups these tests need.
struct Tree {
  rcoord::cmd::Context ctx;
  CLI::App app{"rcoord", "rcoord"};
  Tree() {
    app.set_help_flag("--help", "Print help and exit");
    app.fallthrough();
    ctx.add_global_options(app);
    app.require_subcommand(1);
    rcoord::cmd::add_lock(app, ctx);
    rcoord::cmd::add_queue(app, ctx);
    rcoord::cmd::add_signal(app, ctx);
  }
};

// The message check_before_parse throws, or "" when it lets the command line through.
std::string refused(const Words& words) {
  Tree t;
  try {
    check_before_parse(t.app, words);
  } catch (const rcoord::Error& e) {
    CHECK(e.code() == rcoord::kUsage);
    return std::string(e.what()) + " (" + e.hint() + ")";
  }
  return {};
}

std::string hint(const Words& words) {
  Tree t;
  return usage_hint(t.app, words);
}

}  // namespace

TEST_CASE("edit distance counts a swap of neighbours as one edit") {
  using rcoord::cmd::edit_distance;
  CHECK(edit_distance("lock", "lock") == 0);
  CHECK(edit_distance("lokc", "lock") == 1);
  CHECK(edit_distance("aquire", "acquire") == 1);
  CHECK(edit_distance("tkae", "take") == 1);
  CHECK(edit_distance("", "abc") == 3);
}

TEST_CASE("the nearest candidate: a prefix, or within 2 edits (1 for short words)") {
  using rcoord::cmd::nearest;
  std::vector<std::string> verbs = {"acquire", "release", "extend", "status", "break", "run"};
  CHECK(nearest("aquire", verbs) == "acquire");
  CHECK(nearest("stat", verbs) == "status");
  CHECK(nearest("rn", verbs) == "run");
  CHECK(nearest("frobnicate", verbs).empty());
  CHECK(nearest("--ttll", {"--ttl", "--token", "--wait"}) == "--ttl");
  CHECK(nearest("--wiat", {"--ttl", "--token", "--wait"}) == "--wait");
}

TEST_CASE("unknown commands and options get the nearest name, a group without its verb its verbs") {
  CHECK(hint({"lokc"}) == "unknown command 'lokc': did you mean 'lock'?");
  CHECK(hint({"lock", "aquire", "x"}) == "unknown command 'aquire': did you mean 'acquire'?");
  CHECK(hint({"-p", "6379", "lock", "aquire", "x"}) ==
        "unknown command 'aquire': did you mean 'acquire'?");
  CHECK(hint({"lock", "frob"}) ==
        "unknown command 'frob': 'rcoord lock' has acquire, release, extend, status, wait, break "
        "or run");
  CHECK(hint({"lock"}) ==
        "'rcoord lock' needs a command: acquire, release, extend, status, wait, break or run");
  CHECK(hint({"completion", "bash"}).starts_with("there is no 'completion' command"));
  CHECK(hint({"lock", "acquire", "x", "--ttll", "5s"}) ==
        "unknown option '--ttll' for 'lock acquire': did you mean '--ttl'?");
  CHECK(hint({"lock", "acquire", "x", "--wiat=5s"}) ==
        "unknown option '--wiat' for 'lock acquire': did you mean '--wait'?");
  CHECK(hint({"--jsn", "lock", "status", "x"}) == "unknown option '--jsn': did you mean '--json'?");
  CHECK(hint({"lock", "acquire", "x", "-qz"}) == "unknown option '-z' in '-qz' for 'lock acquire'");
  CHECK(hint({"lock", "acquire", "x", "y"}).empty());  // CLI11 says it: y was not expected
}

TEST_CASE("a run form's command without -- is refused when its options would reach rcoord") {
  CHECK(refused({"lock", "run", "job", "ls", "-la"}) ==
        "'-la' after the command 'ls' would be read as an option of rcoord (put -- before the "
        "command: rcoord lock run job -- ls -la)");
  // rsync's -a would be rcoord's password, silently: refused too.
  CHECK(refused({"lock", "run", "job", "rsync", "-a", "src", "dst"})
            .starts_with("'-a' after the command 'rsync' would be read as an option of rcoord"));
  CHECK(refused({"queue", "consume", "jobs", "./handle.sh", "--verbose"})
            .starts_with("'--verbose' after the command './handle.sh'"));
  CHECK(refused({"lock", "run", "job", "sh", "-c", "echo 'a b'"}) ==
        "'-c' after the command 'sh' would be read as an option of rcoord (put -- before the "
        "command: rcoord lock run job -- sh -c 'echo '\\''a b'\\''')");
  CHECK(refused({"lock", "run", "job", "--ttl", "5m", "--", "ls", "-la"}).empty());
  CHECK(refused({"lock", "run", "--ttl", "5m", "job", "ls"}).empty());
  CHECK(refused({"lock", "run", "job", "-c", "ls -la"}).empty());
  CHECK(refused({"lock", "acquire", "job", "--ttl", "5m"}).empty());
}

TEST_CASE("-n and -s after lock run are refused with the hint; before the group they stay") {
  CHECK(refused({"lock", "run", "-n", "1", "job", "--", "true"})
            .starts_with("-n after 'lock run' would choose a Redis database"));
  CHECK(refused({"lock", "run", "job", "-n", "--", "true"})
            .starts_with("-n after 'lock run' would choose a Redis database"));
  CHECK(refused({"lock", "run", "-s", "job", "--", "true"})
            .starts_with("-s after 'lock run' would name a unix socket"));
  CHECK(
      refused({"lock", "run", "job", "-qn", "1", "--", "true"}).starts_with("-n after 'lock run'"));
  CHECK(refused({"-n", "1", "lock", "run", "job", "--", "true"}).empty());
  CHECK(refused({"-s", "/tmp/r.sock", "lock", "run", "job", "--", "true"}).empty());
  CHECK(refused({"lock", "run", "job", "--", "grep", "-n", "x"}).empty());  // the command's
  CHECK(refused({"lock", "acquire", "job", "-n", "1"}).empty());
  CHECK(refused({"lock", "run", "-w", "5s", "job", "--", "true"}).empty());
}

TEST_CASE("--timeout after lock run is noticed, for the busy message") {
  Tree t;
  CHECK(rcoord::cmd::timeout_after_lock_run(
      t.app, {"lock", "run", "job", "--timeout", "10", "--", "true"}));
  CHECK_FALSE(rcoord::cmd::timeout_after_lock_run(
      t.app, {"--timeout", "10", "lock", "run", "job", "--", "true"}));
}

TEST_CASE("the busy line names the holder, and whether it renews") {
  auto since = [](std::int64_t) { return std::string("02:00:03"); };
  rcoord::lock::Status s;
  s.held = true;
  s.mode = "exclusive";
  s.token = "a67770d8e4111ef0b262cdd381573e44";
  s.ttl_ms = 250'000;
  s.holder.who = {"web-3", 4242, "deploy", "backup.sh", ""};
  s.holder.acquired_at = 1;
  CHECK(rcoord::lock::busy_text(s, since) ==
        "held by deploy@web-3 (pid 4242, backup.sh) since 02:00:03, renewing");
  s.holder.who.cmd = "lock acquire";
  CHECK(rcoord::lock::busy_text(s, since) ==
        "held by deploy@web-3 (pid 4242, lock acquire) since 02:00:03, expires in 4m10s");
  s.holder = {};
  CHECK(rcoord::lock::busy_text(s, since) == "held by token a67770d8…, expires in 4m10s");
  rcoord::lock::Status free;
  CHECK(rcoord::lock::busy_text(free, since).empty());
}
