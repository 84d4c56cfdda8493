#pragma once
/// Output of the bulk verbs (`bloom add/test`, `complete add/remove`): one result per item,
/// written a batch at a time so a stream of millions of items costs one write per batch.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "context.hpp"
#include "output.hpp"

namespace rcoord::cmd {

/// Prints `results`: in JSON mode one object per item (`json(j, r)` fills it); in text mode
/// the items `line(r)` returns a line for (an empty optional: nothing), one per line. Nothing
/// with -q, nor with `summary` (the caller prints the totals at the end).
template <typename R, typename Json, typename Line>
void print_items(Context& ctx, bool summary, const std::vector<R>& results, Json&& json,
                 Line&& line) {
  if (ctx.out().quiet() || summary || results.empty()) return;
  std::string chunk;
  if (ctx.out().json()) {
    for (const auto& r : results) {
      nlohmann::ordered_json j;
      json(j, r);
      chunk += dump_json(j);
      chunk += '\n';
    }
  } else {
    for (const auto& r : results) {
      if (auto text = line(r)) {
        chunk += *text;
        chunk += '\n';
      }
    }
  }
  ctx.out().write_text(chunk);
}

}  // namespace rcoord::cmd
