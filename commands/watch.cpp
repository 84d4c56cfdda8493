#include "watch.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "duration.hpp"
#include "errors.hpp"
#include "signals.hpp"

namespace rcoord::cmd {

void add_watch_option(CLI::App* verb, std::string& watch) {
  verb->add_option("--watch", watch,
                   "Show it again every DUR (100ms or more) until interrupted (Ctrl-C)")
      ->type_name("DURATION")
      ->check(kDurationCheck);
}

Millis refresh_interval_or_throw(std::string_view option, const std::string& value) {
  Millis every = duration_or_throw(option, value);
  // Faster than a screen can be read, it only loads the server (0.5ms was accepted once).
  if (every < kMinWatch) {
    throw Error(
        kUsage,
        fmt::format("{} {} is too short: at least {}", option, value, format_duration(kMinWatch)),
        fmt::format("use e.g. {} 1s", option));
  }
  return every;
}

int run_watched(Context& ctx, const std::string& watch, const std::function<int()>& once) {
  if (watch.empty()) return once();
  Millis every = refresh_interval_or_throw("--watch", watch);
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
