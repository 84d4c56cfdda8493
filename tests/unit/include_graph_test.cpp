// The modules of src/, and those of commands/, depend on each other in one direction only: the
// graph of their `#include "..."` lines has no cycle. A module is a .hpp/.cpp pair, so
// connection.cpp including cluster.hpp while cluster.hpp includes connection.hpp is a cycle too.

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#ifndef RCOORD_SOURCE_DIR
#error "RCOORD_SOURCE_DIR must name the source tree (tests/CMakeLists.txt defines it)"
#endif

namespace {

namespace fs = std::filesystem;

// Module name -> the modules it includes (itself left out).
using Graph = std::map<std::string, std::set<std::string>>;

Graph include_graph(const fs::path& dir) {
  Graph graph;
  for (const auto& entry : fs::directory_iterator(dir)) {
    auto ext = entry.path().extension();
    if (ext == ".hpp" || ext == ".cpp") graph[entry.path().stem().string()];
  }
  const std::regex include_line(R"(^\s*#\s*include\s*"([^"]+)\")");
  for (const auto& entry : fs::directory_iterator(dir)) {
    auto ext = entry.path().extension();
    if (ext != ".hpp" && ext != ".cpp") continue;
    std::string from = entry.path().stem().string();
    std::ifstream in(entry.path());
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (!std::regex_search(line, m, include_line)) continue;
      std::string to = fs::path(m[1].str()).stem().string();
      // Generated headers (lua_scripts.hpp), tables (.inc) and src/'s headers included from
      // commands/ are no modules of the folder read.
      if (to != from && graph.count(to) != 0) graph[from].insert(to);
    }
  }
  return graph;
}

// A cycle as the list of its modules, first repeated at the end; nullopt when none.
std::optional<std::vector<std::string>> find_cycle(const Graph& graph) {
  enum class Mark { kNew, kOnPath, kDone };
  std::map<std::string, Mark> mark;
  std::vector<std::string> path;
  std::optional<std::vector<std::string>> found;
  auto visit = [&](auto& self, const std::string& node) -> void {
    mark[node] = Mark::kOnPath;
    path.push_back(node);
    auto edges = graph.find(node);
    if (edges != graph.end()) {
      for (const auto& next : edges->second) {
        if (found) return;
        if (mark[next] == Mark::kOnPath) {
          auto start = std::find(path.begin(), path.end(), next);
          found = std::vector<std::string>(start, path.end());
          found->push_back(next);
          return;
        }
        if (mark[next] == Mark::kNew) self(self, next);
      }
    }
    path.pop_back();
    mark[node] = Mark::kDone;
  };
  for (const auto& [node, edges] : graph) {
    if (!found && mark[node] == Mark::kNew) visit(visit, node);
  }
  return found;
}

std::string describe(const std::vector<std::string>& cycle) {
  std::string out;
  for (const auto& m : cycle) out += (out.empty() ? "" : " -> ") + m;
  return out;
}

}  // namespace

TEST_CASE("the cycle finder sees a cycle through a .hpp/.cpp pair, and no other") {
  Graph acyclic{{"connection", {"reply", "session"}}, {"session", {"reply"}}, {"reply", {}}};
  CHECK_FALSE(find_cycle(acyclic));
  Graph loop{{"connection", {"cluster"}}, {"cluster", {"connection", "url"}}, {"url", {}}};
  auto cycle = find_cycle(loop);
  REQUIRE(cycle);
  CHECK(describe(*cycle) == "cluster -> connection -> cluster");
}

// Reads the graph of `dir` and checks it has no cycle; `from` must include `to` there (a graph
// read from the wrong place would pass for want of edges).
void check_acyclic(const char* dir, const std::string& from, const std::string& to) {
  fs::path path = fs::path(RCOORD_SOURCE_DIR) / dir;
  REQUIRE(fs::is_directory(path));
  Graph graph = include_graph(path);
  REQUIRE(graph.size() > 20);
  REQUIRE(graph[from].count(to) == 1);
  auto cycle = find_cycle(graph);
  INFO(dir << ": include cycle: " << (cycle ? describe(*cycle) : std::string()));
  CHECK_FALSE(cycle);
}

TEST_CASE("the modules of src/ include each other without a cycle") {
  check_acyclic("src", "connection", "session");
}

TEST_CASE("the modules of commands/ include each other without a cycle") {
  check_acyclic("commands", "main", "lock_command");
}
