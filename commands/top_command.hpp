#pragma once
/// `rcoord top`: the objects rcoord keeps, full screen and refreshed in place, most recently
/// changed first, with a detail view of one; one snapshot when stdout is not a terminal.

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace rcoord::cmd {
void add_top(CLI::App& app, Context& ctx);
}  // namespace rcoord::cmd
