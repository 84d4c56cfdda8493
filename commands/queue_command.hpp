#pragma once
/// `rcoord queue …`: registration of the verbs (the views of their results: queue_view.hpp).

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "queue_view.hpp"

namespace rcoord::cmd {
void add_queue(CLI::App& app, Context& ctx);
}  // namespace rcoord::cmd
