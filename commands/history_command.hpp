#pragma once
/// `rcoord history NAME`: the event log of a lock, semaphore, election or queue (SPEC §5
/// "history"), oldest first, and with --follow what happens next.

#include <CLI/CLI.hpp>
#include <string>

#include "context.hpp"
#include "history.hpp"

namespace rcoord::cmd {

void add_history(CLI::App& app, Context& ctx);

/// One event as a line of text: time, event, who, then its fields. Every part read back is
/// escaped (escape_text: one line, no terminal control); the note is always quoted, and any
/// other value that holds a space, a double quote or '=' is too (quote_text), so no value can
/// pass for another field.
std::string history_line(const history::Event& e);

}  // namespace rcoord::cmd
