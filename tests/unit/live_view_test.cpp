// rcoord top's model (live::Board: change times, order, filter), its terminal input (keys
// from escape sequences) and its screens; rcoord metrics' exposition text.

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "history_command.hpp"
#include "live.hpp"
#include "metrics_command.hpp"
#include "terminal.hpp"
#include "top_view.hpp"

namespace live = rcoord::live;
namespace top = rcoord::cmd::top;
using rcoord::cmd::Key;
using rcoord::cmd::KeyPress;
using rcoord::inventory::Object;

namespace {

Object object(std::string type, std::string name, std::string fingerprint,
              std::int64_t age_ms = -1) {
  Object o;
  o.type = std::move(type);
  o.name = std::move(name);
  o.state = "state of " + o.name;
  o.fingerprint = std::move(fingerprint);
  o.age_ms = age_ms;
  return o;
}

std::vector<std::string> names(const std::vector<const live::Row*>& rows) {
  std::vector<std::string> out;
  for (const auto* r : rows) out.push_back(r->object.name);
  return out;
}

const auto kStart = live::Clock::time_point{} + std::chrono::hours(1);

}  // namespace

TEST_CASE("the board puts the most recently changed first") {
  live::Board board;
  // First pass: nothing seen to change; a lock the server dates (taken 5 s ago) comes first,
  // the others after it by type and name.
  board.update(
      {object("queue", "jobs", "1"), object("lock", "b", "x"), object("lock", "a", "y", 5000)},
      kStart);
  CHECK(names(board.rows("")) == std::vector<std::string>{"a", "b", "jobs"});
  CHECK_FALSE(board.rows("")[1]->changed.has_value());

  // Second pass: the queue changed, a new lock appeared (taken 100 ms ago): newest first.
  auto later = kStart + std::chrono::seconds(1);
  board.update({object("queue", "jobs", "2"), object("lock", "b", "x"),
                object("lock", "a", "y", 6000), object("lock", "c", "z", 100)},
               later);
  CHECK(names(board.rows("")) == std::vector<std::string>{"jobs", "c", "a", "b"});
  REQUIRE(board.rows("")[0]->changed.has_value());
  CHECK(*board.rows("")[0]->changed == later);
  CHECK(*board.rows("")[1]->changed == later - std::chrono::milliseconds(100));

  // Unchanged fingerprints keep their time; a TTL counting down is not in the fingerprint.
  board.update({object("queue", "jobs", "2"), object("lock", "b", "x"),
                object("lock", "a", "y", 7000), object("lock", "c", "z", 1100)},
               later + std::chrono::seconds(1));
  CHECK(*board.rows("")[0]->changed == later);
  // An object that is gone leaves; back again, it is new.
  board.update({object("lock", "b", "x")}, later + std::chrono::seconds(2));
  CHECK(board.size() == 1);
  board.update({object("lock", "b", "x"), object("queue", "jobs", "2")},
               later + std::chrono::seconds(3));
  CHECK(names(board.rows("")).front() == "jobs");
}

TEST_CASE("the board filters by name, ASCII letters in any case") {
  live::Board board;
  board.update({object("lock", "Deploy-Web", "1"), object("lock", "backup", "1"),
                object("sem", "deploy-db", "1")},
               kStart);
  CHECK(names(board.rows("DEPLOY")) == std::vector<std::string>{"Deploy-Web", "deploy-db"});
  CHECK(board.rows("nothing").empty());
  CHECK(live::name_matches("Zürich", "ürich"));
  CHECK_FALSE(live::name_matches("Zürich", "ÜRICH"));  // only ASCII letters fold
}

TEST_CASE("keys are read from the bytes a terminal sends") {
  std::string in = "j\033[A\033OB\033[5~\033[6~\033[1~\033[4~\r\177/a\f";
  auto keys = rcoord::cmd::take_keys(in, false);
  std::vector<KeyPress> want = {{Key::kChar, 'j'}, {Key::kUp, 0},       {Key::kDown, 0},
                                {Key::kPageUp, 0}, {Key::kPageDown, 0}, {Key::kHome, 0},
                                {Key::kEnd, 0},    {Key::kEnter, 0},    {Key::kBackspace, 0},
                                {Key::kChar, '/'}, {Key::kChar, 'a'},   {Key::kRedraw, 0}};
  CHECK(keys == want);
  CHECK(in.empty());

  // An escape sequence cut short waits for the rest; a lone ESC is Escape once no more came.
  in = "x\033[";
  CHECK(rcoord::cmd::take_keys(in, false) == std::vector<KeyPress>{{Key::kChar, 'x'}});
  CHECK(in == "\033[");
  in += "B";
  CHECK(rcoord::cmd::take_keys(in, false) == std::vector<KeyPress>{{Key::kDown, 0}});
  in = "\033";
  CHECK(rcoord::cmd::take_keys(in, false).empty());
  CHECK(rcoord::cmd::take_keys(in, true) == std::vector<KeyPress>{{Key::kEscape, 0}});
  // Ctrl-Up and other modified keys still move; unknown sequences are dropped whole.
  in = "\033[1;5A\033[2~q";
  CHECK(rcoord::cmd::take_keys(in, false) ==
        std::vector<KeyPress>{{Key::kUp, 0}, {Key::kChar, 'q'}});
}

TEST_CASE("cells fit their columns, whatever the characters") {
  CHECK(top::columns("abc") == 3);
  CHECK(top::columns("Zürich") == 6);
  CHECK(top::columns("锁") == 2);
  CHECK(top::columns("e\xcc\x81") == 1);  // e + combining acute
  CHECK(top::columns("\xff") == 1);
  CHECK(top::fit("abcdef", 4) == "abc…");
  CHECK(top::fit("ab", 4) == "ab  ");
  CHECK(top::fit("ab", 4, false) == "ab");
  CHECK(top::fit("锁锁锁", 4) == "锁… ");  // never half a wide character
  CHECK(top::fit("Zürich", 3) == "Zü…");
  CHECK(top::ago(std::chrono::milliseconds(4500)) == "4s");
  CHECK(top::ago(std::chrono::minutes(12)) == "12m");
  CHECK(top::ago(std::chrono::hours(50)) == "2d");
  CHECK(top::time_left(850) == "850ms");
  CHECK(top::time_left(12345) == "12.3s");
  CHECK(top::time_left(310'000) == "5m10s");
  CHECK(top::time_left(7'500'000) == "2h05m");
  CHECK(top::scroll(0, 30, 10, 100) == 21);
  CHECK(top::scroll(21, 5, 10, 100) == 5);
  CHECK(top::scroll(5, 7, 10, 100) == 5);
  CHECK(top::scroll(50, 3, 10, 5) == 0);
}

TEST_CASE("the list screen: title, header, rows (the chosen one reversed), footer") {
  live::Board board;
  auto evil = object("lock", "a\nb\033[2J", "1");
  evil.holder = "3f9d57ad…";
  evil.waiting = 2;
  evil.ttl_ms = 12300;
  board.update({evil, object("queue", "jobs", "1")}, kStart);
  top::ListScreen l;
  l.title = "rcoord top  test";
  l.rows = board.rows("");
  l.selected = 1;
  l.now = kStart;
  auto lines = top::render_list(l, 100, 10);
  REQUIRE(lines.size() == 10);
  CHECK(lines[0].find("rcoord top  test") != std::string::npos);
  CHECK(lines[1].find("TYPE") != std::string::npos);
  CHECK(lines[1].find("STATE") != std::string::npos);
  // A name cannot break the line or drive the terminal: it is shown escaped.
  CHECK(lines[2].find("a\\nb\\x1b[2J") != std::string::npos);
  CHECK(lines[2].find('\n') == std::string::npos);
  CHECK(lines[2].find("3f9d57ad…") != std::string::npos);
  CHECK(lines[2].find("12.3s") != std::string::npos);
  CHECK(lines[2].rfind("\033[7m", 0) == std::string::npos);
  CHECK(lines[3].rfind("\033[7m", 0) == 0);  // the selected row
  CHECK(lines[9].find("q quit") != std::string::npos);
  for (const auto& line : lines) {
    std::string plain;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\033') {
        while (i < line.size() && line[i] != 'm') ++i;
        continue;
      }
      plain += line[i];
    }
    CHECK(top::columns(plain) <= 100);
  }
  l.editing = true;
  l.filter = "jo";
  CHECK(top::render_list(l, 100, 10)[9].rfind("/jo_", 0) == 0);
}

TEST_CASE("the snapshot is a table with a header, columns aligned") {
  live::Board board;
  board.update({object("lock", "a", "1"), object("queue", "jobs-long-name", "1")}, kStart);
  auto lines = top::snapshot_lines(board.rows(""), kStart);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].rfind("TYPE   NAME            HOLDER", 0) == 0);
  CHECK(lines[1].rfind("lock   a               -", 0) == 0);
  CHECK(lines[2].rfind("queue  jobs-long-name  -", 0) == 0);
}

TEST_CASE("metrics: label values escaped as the text format asks") {
  CHECK(rcoord::cmd::escape_label("plain") == "plain");
  CHECK(rcoord::cmd::escape_label("say \"hi\"") == "say \\\"hi\\\"");
  CHECK(rcoord::cmd::escape_label("a\\b") == "a\\\\b");
  CHECK(rcoord::cmd::escape_label("two\nlines") == "two\\nlines");
  CHECK(rcoord::cmd::escape_label("Zürich\t锁") == "Zürich\t锁");
}

TEST_CASE("metrics: every family with HELP and TYPE, its samples together") {
  rcoord::cmd::Exposition e;
  Object q = object("queue", "jo\"bs", "1");
  q.gauges = {{"rcoord_queue_messages", "ready", 2}, {"rcoord_queue_messages", "dead", 1}};
  Object l = object("lock", "x", "1");
  l.gauges = {{"rcoord_lock_held", "", 1}, {"rcoord_lock_held_seconds", "", 1.5}};
  Object l2 = object("lock", "y", "1");
  l2.gauges = {{"rcoord_lock_held", "", 0}};
  CHECK(e.add(q));
  CHECK(e.add(l));
  CHECK(e.add(l2));
  std::string text = e.text();
  CHECK(text.find("# HELP rcoord_lock_held ") != std::string::npos);
  CHECK(text.find("# TYPE rcoord_lock_held gauge\n"
                  "rcoord_lock_held{name=\"x\"} 1\n"
                  "rcoord_lock_held{name=\"y\"} 0\n") != std::string::npos);
  CHECK(text.find("rcoord_lock_held_seconds{name=\"x\"} 1.5\n") != std::string::npos);
  CHECK(text.find("rcoord_queue_messages{name=\"jo\\\"bs\",state=\"ready\"} 2\n") !=
        std::string::npos);
  CHECK(text.find("# TYPE rcoord_latch_remaining gauge\n") != std::string::npos);
  CHECK(text.find("_count") == std::string::npos);  // a suffix Prometheus keeps for summaries
  // The scrape's own two metrics come first; a scrape that is not up has them alone.
  CHECK(text.rfind("# HELP rcoord_up ", 0) == 0);
  CHECK(text.find("\nrcoord_up 1\n") != std::string::npos);
  std::string down = e.text({false, 1700000000.5});
  CHECK(down.find("\nrcoord_up 0\n") != std::string::npos);
  CHECK(down.find("\nrcoord_scrape_timestamp_seconds 1700000000.5\n") != std::string::npos);
  CHECK(down.find("rcoord_lock_held") == std::string::npos);
  // JSON: the same samples, integers where they are.
  auto j = e.json({true, 1700000000.5});
  CHECK(j["up"] == 1);
  CHECK(j["scraped_at"] == "2023-11-14T22:13:20.500Z");
  CHECK(j["metrics"]["rcoord_lock_held"]["samples"][0]["labels"]["name"] == "x");
  CHECK(j["metrics"]["rcoord_lock_held"]["samples"][0]["value"].is_number_integer());
  CHECK(j["metrics"]["rcoord_lock_held_seconds"]["samples"][0]["value"] == 1.5);
  CHECK(j["metrics"]["rcoord_queue_messages"]["samples"][0]["labels"]["state"] == "ready");
  CHECK(e.json({false, 1700000000.5})["metrics"].size() == 2);

  // A name that is not UTF-8 is carried with \xHH; one that then reads as another's is left
  // out (a series must not appear twice).
  Object bad = object("lock", "b\xff", "1");
  bad.gauges = {{"rcoord_lock_held", "", 1}};
  CHECK(e.add(bad));
  CHECK(e.text().find("rcoord_lock_held{name=\"b\\\\xff\"} 1\n") != std::string::npos);
  Object lookalike = object("lock", "b\\xff", "1");
  CHECK_FALSE(e.add(lookalike));
  Object other_type = object("sem", "b\\xff", "1");
  CHECK(e.add(other_type));
}

TEST_CASE("metrics: take counters as counters, the waits as a cumulative histogram") {
  rcoord::cmd::Exposition e;
  Object l = object("lock", "x", "1");
  rcoord::inventory::Contention c;
  c.acquired = 5;
  c.busy = 3;
  c.lost = 1;
  c.wait_ms = 2750;
  c.waits[0] = 2;      // at most 5 ms
  c.waits[7] = 2;      // at most 1 s
  c.waits.back() = 1;  // over 60 s
  l.contention = c;
  Object plain = object("lock", "y", "1");  // never counted: no samples of its own
  Object q = object("queue", "jobs", "1");
  q.contention = c;  // only lock, sem and elect are counted
  CHECK(e.add(l));
  CHECK(e.add(plain));
  CHECK(e.add(q));
  std::string text = e.text();
  CHECK(text.find("# TYPE rcoord_lock_acquired_total counter\n"
                  "rcoord_lock_acquired_total{name=\"x\"} 5\n") != std::string::npos);
  CHECK(text.find("rcoord_lock_busy_total{name=\"x\"} 3\n") != std::string::npos);
  CHECK(text.find("rcoord_lock_lost_total{name=\"x\"} 1\n") != std::string::npos);
  CHECK(text.find("# TYPE rcoord_lock_wait_seconds histogram\n"
                  "rcoord_lock_wait_seconds_bucket{name=\"x\",le=\"0.005\"} 2\n"
                  "rcoord_lock_wait_seconds_bucket{name=\"x\",le=\"0.01\"} 2\n") !=
        std::string::npos);
  CHECK(text.find("le=\"0.5\"} 2\n") != std::string::npos);
  CHECK(text.find("le=\"1\"} 4\n") != std::string::npos);
  CHECK(text.find("le=\"60\"} 4\n") != std::string::npos);
  CHECK(text.find("rcoord_lock_wait_seconds_bucket{name=\"x\",le=\"+Inf\"} 5\n"
                  "rcoord_lock_wait_seconds_sum{name=\"x\"} 2.75\n"
                  "rcoord_lock_wait_seconds_count{name=\"x\"} 5\n") != std::string::npos);
  CHECK(text.find("name=\"y\"} 0") == std::string::npos);
  CHECK(text.find("_total{name=\"jobs\"}") == std::string::npos);
  CHECK(text.find("# TYPE rcoord_elect_wait_seconds histogram\n") != std::string::npos);
  auto j = e.json();
  auto h = j["metrics"]["rcoord_lock_wait_seconds"];
  CHECK(h["type"] == "histogram");
  CHECK(h["samples"][0]["buckets"]["1"] == 4);
  CHECK(h["samples"][0]["buckets"]["+Inf"] == 5);
  CHECK(h["samples"][0]["sum"] == 2.75);
  CHECK(h["samples"][0]["count"] == 5);
  CHECK(j["metrics"]["rcoord_sem_busy_total"]["type"] == "counter");
  CHECK(j["metrics"]["rcoord_lock_lost_total"]["samples"][0]["value"] == 1);
}

TEST_CASE("history lines (history's text, top's detail): every part read back escaped") {
  rcoord::history::Event e;
  e.at = 0;
  e.event = "acquired\x1b]0;owned\x07\n2026-01-01T00:00:00.000Z  released";
  e.who.host = "web-3";
  e.who.pid = 42;
  e.who.user = "backup";
  e.who.cmd = "lock acquire";
  e.who.note = "x fence=99";
  e.token = "t fence=7";
  e.fields = {{"fence", "12"}, {"mode", "say \"hi\""}, {"odd\nfield", ""}};
  std::string line = rcoord::cmd::history_line(e);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find('\x1b') == std::string::npos);
  CHECK(line.find('\x07') == std::string::npos);
  CHECK(line.find("acquired\\x1b]0;owned\\x07\\n2026") != std::string::npos);
  CHECK(line.find(" fence=12 ") != std::string::npos);
  CHECK(line.find(" mode=\"say \\\"hi\\\"\"") != std::string::npos);
  CHECK(line.find(" odd\\nfield=\"\"") != std::string::npos);
  CHECK(line.find(" note=\"x fence=99\"") != std::string::npos);
  CHECK(line.find(" token=\"t fence=7\"") != std::string::npos);
  e.who.note = "https://ci.example/run/1";
  e.token = "6306abcd";
  line = rcoord::cmd::history_line(e);
  CHECK(line.find(" note=\"https://ci.example/run/1\"") != std::string::npos);
  CHECK(line.find(" token=6306abcd") != std::string::npos);
}
