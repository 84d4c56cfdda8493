#pragma once
/// `rcoord help [GROUP]`: the manual of a command group, rcoord-GROUP(1), shown by man(1).

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "context.hpp"

namespace rcoord::cmd {
/// Registers `help`; `groups` are the command groups that have a page of their own.
void add_help(CLI::App& app, Context& ctx, std::vector<std::string> groups);
}  // namespace rcoord::cmd
