#pragma once
/// How a Redlock asks its nodes: one call on every node at once (a thread each), what each
/// said, and whether a quorum answered. Internal to redlock*.cpp.

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "connection.hpp"
#include "errors.hpp"
#include "signals.hpp"

namespace rcoord::redlock {

// What one node said: a value, or the error that kept it from answering.
template <typename T>
struct NodeResult {
  std::optional<T> value;
  std::optional<Error> error;
  bool answered() const { return value.has_value(); }
};

// Runs fn(i) for i in [0, n) at once, one thread each (the calling thread takes i = 0).
template <typename Fn>
void in_parallel(std::size_t n, Fn fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t i = 1; i < n; ++i) threads.emplace_back(fn, i);
  if (n > 0) fn(0);
  for (auto& t : threads) t.join();
}

// Runs fn(i, conn) on every node at once, one thread each, and collects what each said.
// Signals stay pending meanwhile (the per-node timeout bounds the wait); a waiting caller
// sees them in its interruptible sleep between attempts.
template <typename Fn>
auto on_all(std::vector<Connection>& conns, Fn fn) {
  using T = decltype(fn(std::size_t{}, conns.front()));
  std::vector<NodeResult<T>> results(conns.size());
  signals::Uninterruptible quiet;
  auto one = [&](std::size_t i) {
    try {
      results[i].value = fn(i, conns[i]);
    } catch (const Error& e) {
      results[i].error = e;
    } catch (const std::exception& e) {
      results[i].error = Error(kServer, e.what());
    }
  };
  in_parallel(conns.size(), one);
  return results;
}

template <typename T>
int count_answered(const std::vector<NodeResult<T>>& results) {
  return static_cast<int>(
      std::count_if(results.begin(), results.end(), [](const auto& r) { return r.answered(); }));
}

// An error other than "this node did not answer" (a usage or server error) is the caller's
// to see: the first such one, if any.
// Throws a copy of an error a node's call stored (a fresh temporary, as throw expects).
[[noreturn]] inline void rethrow(const Error& e) { throw Error(e.code(), e.what(), e.hint()); }

template <typename T>
void rethrow_hard_error(const std::vector<NodeResult<T>>& results) {
  for (const auto& r : results) {
    if (r.error && r.error->code() != kConnection) rethrow(*r.error);
  }
}

template <typename T>
Error no_quorum(const std::vector<Connection>& conns, const std::vector<NodeResult<T>>& results) {
  int answered = count_answered(results);
  std::string first;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].error) {
      first = results[i].error->what();
      std::string where = conns[i].endpoint().describe();
      if (first.find(where) == std::string::npos) first = fmt::format("{}: {}", where, first);
      break;
    }
  }
  int n = static_cast<int>(conns.size());
  return {
      kConnection,
      fmt::format("only {} of {} Redis nodes answered; Redlock needs {}", answered, n, n / 2 + 1),
      fmt::format("bring the nodes back or check --url; first failure: {}", first)};
}

template <typename T>
void require_quorum(const std::vector<Connection>& conns,
                    const std::vector<NodeResult<T>>& results) {
  if (count_answered(results) >= static_cast<int>(conns.size()) / 2 + 1) return;
  rethrow_hard_error(results);
  throw no_quorum(conns, results);
}

}  // namespace rcoord::redlock
