// Two rules of the source tree that no compiler checks:
// - a room that fits: no .cpp or .hpp of src/ or commands/ is longer than kMaxLines (a file
//   that grows past it is split by job, as supervise.cpp and bloom.cpp were);
// - commands/ sends nothing to Redis itself: it parses, calls src/ and prints. A command
//   layer that sent commands would write again what src/ writes once (redirects, replies,
//   replica waits).

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#ifndef RCOORD_SOURCE_DIR
#error "RCOORD_SOURCE_DIR must name the source tree (tests/CMakeLists.txt defines it)"
#endif

namespace {

namespace fs = std::filesystem;

constexpr int kMaxLines = 600;

std::vector<fs::path> sources(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    auto ext = entry.path().extension();
    if (ext == ".hpp" || ext == ".cpp") out.push_back(entry.path());
  }
  return out;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n' ? 1 : 0;
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

// The first line of `text` that talks to Redis below src/'s API: it includes a header of the
// wire (replies, redirects, sessions, sockets, scripts), or calls the connection's raw
// command or pipeline API. Empty when there is none.
std::string sends_to_redis(const std::string& text) {
  static const std::regex wire_header(
      R"re(^\s*#\s*include\s*"(reply|redirect|session|transport|script)\.hpp")re");
  static const std::regex raw_call(
      R"re((\.|->)\s*(command|command_raw|command_blocking|pipeline|pipeline_each|pipeline_blocking|send_formatted|receive)\s*\(|\bsend_calls(_routed)?\s*\()re");
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto code = line.substr(0, line.find("//"));
    if (std::regex_search(code, wire_header) || std::regex_search(code, raw_call)) return line;
  }
  return {};
}

}  // namespace

TEST_CASE("the size rule counts lines, and the Redis rule sees a command sent") {
  CHECK(count_lines("a\nb\n") == 2);
  CHECK(count_lines("a\nb") == 2);
  CHECK(sends_to_redis("  Reply r = conn.command({\"TIME\"});\n") != "");
  CHECK(sends_to_redis("auto replies = ctx.conn().pipeline(asks);\n") != "");
  CHECK(sends_to_redis("#include \"redirect.hpp\"\n") != "");
  CHECK(sends_to_redis("x->add_option(\"command\", run->command, \"The command\");\n") == "");
  CHECK(sends_to_redis("auto r = lock::status(ctx.conn(), ctx.keys(), name);\n") == "");
  CHECK(sends_to_redis("// ctx.conn().command() is src/'s to call\n") == "");
}

TEST_CASE("no source file of src/ or commands/ is longer than 600 lines") {
  int read_files = 0;
  for (const char* dir : {"src", "commands"}) {
    fs::path path = fs::path(RCOORD_SOURCE_DIR) / dir;
    REQUIRE(fs::is_directory(path));
    for (const auto& file : sources(path)) {
      ++read_files;
      int lines = count_lines(read(file));
      INFO(dir << "/" << file.filename().string() << ": " << lines
               << " lines; split it by job (see docs/architecture.md)");
      CHECK(lines <= kMaxLines);
    }
  }
  // A tree read from the wrong place would pass for want of files.
  CHECK(read_files > 100);
}

TEST_CASE("commands/ sends nothing to Redis itself: it calls src/") {
  fs::path commands = fs::path(RCOORD_SOURCE_DIR) / "commands";
  REQUIRE(fs::is_directory(commands));
  int read_files = 0;
  for (const auto& file : sources(commands)) {
    std::string name = file.filename().string();
    ++read_files;
    std::string line = sends_to_redis(read(file));
    INFO("commands/" << name << ": " << line << " (move the query into src/)");
    CHECK(line.empty());
  }
  CHECK(read_files > 30);
}
