#pragma once
/// `rcoord history NAME`: the event log of a lock, semaphore, election or queue (SPEC §5
/// "history"), oldest first, and with --follow what happens next.

#include <CLI/CLI.hpp>
#include <string>

#include "context.hpp"
#include "history.hpp"

namespace rcoord::cmd {

void add_history(CLI::App& app, Context& ctx);

/// One event as a line of text: time, event, who, then its fields (escaped for a terminal).
std::string history_line(const history::Event& e);

}  // namespace rcoord::cmd
