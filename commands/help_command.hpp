#pragma once
/// `rcoord help [GROUP]`: the manual of a command group, rcoord-GROUP(1), shown by man(1).

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "context.hpp"

namespace rcoord::cmd {
/// Shows rcoord-GROUP(1), or rcoord(1) when `group` is empty, by replacing the process with
/// man(1); throws a usage error (exit 2, pointing to --help) when man or the page is missing.
/// `rcoord help GROUP` and `rcoord GROUP --help --man` both come here.
int open_manual(const std::string& group);
/// Registers `help`; `groups` are the command groups that have a page of their own.
void add_help(CLI::App& app, Context& ctx, std::vector<std::string> groups);
}  // namespace rcoord::cmd
