#include "watch.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "duration.hpp"
#include "errors.hpp"
#include "signals.hpp"

namespace rcoord::cmd {

void add_watch_option(CLI::App* verb, std::optional<Millis>& watch) {
  add_duration(verb, "--watch", watch,
               "Show it again every DUR (100ms or more) until interrupted (Ctrl-C)",
               kRefreshBounds);
}

int run_watched(Context& ctx, std::optional<Millis> watch, const std::function<int()>& once) {
  if (!watch) return once();
  const Millis every = *watch;
  const bool redraw = isatty(STDOUT_FILENO) != 0 && !ctx.out().quiet();
  signals::install();
  for (;;) {
    auto next = std::chrono::steady_clock::now() + every;
    if (redraw) ctx.out().write_raw("\033[H\033[2J");  // home, clear: redraw in place
    try {
      once();
    } catch (const Error& e) {
      if (e.code() == kInterrupted) return 0;
      throw;
    }
    if (!signals::sleep_until(next)) return 0;
  }
}

}  // namespace rcoord::cmd
