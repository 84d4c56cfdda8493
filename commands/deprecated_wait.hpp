#pragma once
/// The old spellings of wait options (`--timeout` after `signal wait`…), still taken, with a
/// warning that names the new one.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "context.hpp"
#include "duration.hpp"
#include "options.hpp"

namespace rcoord::cmd {

/// Adds `old_flag` (e.g. "--timeout") to `verb` as a deprecated spelling of `wait`, a wait
/// option added with add_wait: it sets the same `target`, is left out of the help, and
/// given with `wait` is a usage error. Once the command line has parsed, `ctx` prints one
/// warning naming the new spelling (Context::deprecated).
CLI::Option* add_deprecated_wait(CLI::App* verb, const std::string& old_flag, CLI::Option* wait,
                                 Millis& target, Context& ctx);
/// As above, for a wait whose `target` stays nullopt when it is not given.
CLI::Option* add_deprecated_wait(CLI::App* verb, const std::string& old_flag, CLI::Option* wait,
                                 std::optional<Millis>& target, Context& ctx);

}  // namespace rcoord::cmd
