#pragma once
/// `--watch DUR` for every status, info and stats verb: show the answer again every DUR until
/// interrupted. On a terminal the screen is redrawn in place (as watch(1) does); otherwise
/// each refresh is printed after the last, one JSON line per refresh with --json.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "context.hpp"

namespace rcoord::cmd {

/// The shortest --watch interval: faster refreshes cannot be read, and only load the server.
constexpr Millis kMinWatch{100};

/// The refresh interval `value` of `option` (--watch, top's --interval); a usage error when it
/// is malformed or shorter than kMinWatch.
Millis refresh_interval_or_throw(std::string_view option, const std::string& value);

/// Adds `--watch DUR` to `verb`, storing the raw value in `watch`.
void add_watch_option(CLI::App* verb, std::string& watch);

/// Runs `once` (which prints one answer and returns its exit code), then again every
/// `watch` until SIGINT/SIGTERM/SIGHUP; returns `once`'s code when `watch` is empty, else 0
/// after the interruption. Errors (e.g. the server going away) end the watch as they would
/// end a single call.
int run_watched(Context& ctx, const std::string& watch, const std::function<int()>& once);

}  // namespace rcoord::cmd
