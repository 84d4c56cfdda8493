#pragma once
/// `--watch DUR` for every status, info and stats verb: show the answer again every DUR until
/// interrupted. On a terminal the screen is redrawn in place (as watch(1) does); otherwise
/// each refresh is printed after the last, one JSON line per refresh with --json.

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "context.hpp"

namespace rcoord::cmd {

/// The shortest --watch interval: faster refreshes cannot be read, and only load the server.
constexpr Millis kMinWatch{100};

/// What a refresh interval (--watch, top's --interval) accepts.
inline constexpr DurationBounds kRefreshBounds{false, "1s", kMinWatch};

/// Adds `--watch DUR` to `verb`; `watch` stays nullopt when it is not given.
void add_watch_option(CLI::App* verb, std::optional<Millis>& watch);

/// Runs `once` (which prints one answer and returns its exit code), then again every
/// `watch` until SIGINT/SIGTERM/SIGHUP; returns `once`'s code when `watch` is nullopt, else 0
/// after the interruption. Errors (e.g. the server going away) end the watch as they would
/// end a single call.
int run_watched(Context& ctx, std::optional<Millis> watch, const std::function<int()>& once);

}  // namespace rcoord::cmd
