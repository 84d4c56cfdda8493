// rcoord: coordination primitives on Redis, for shell scripts, cron and CI.
// Parses the command line, runs the chosen verb, and maps errors to the exit codes of SPEC §2.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bloom_command.hpp"
#include "complete_command.hpp"
#include "context.hpp"
#include "elect_command.hpp"
#include "errors.hpp"
#include "limit_command.hpp"
#include "lock_command.hpp"
#include "metrics_command.hpp"
#include "ops_command.hpp"
#include "queue_command.hpp"
#include "sem_command.hpp"
#include "signal_command.hpp"
#include "signals.hpp"
#include "top_command.hpp"

namespace {

constexpr const char* kFooter =
    "Exit codes: 0 yes, 1 no (busy, denied, absent), 2 usage, 3 connection, 4 server or data,\n"
    "5 lock, permit or leadership lost while the command ran; run forms exit with the\n"
    "command's code.\n"
    "Examples:\n"
    "  rcoord lock run nightly-backup -- ./backup.sh\n"
    "  TOKEN=$(rcoord lock acquire deploy --ttl 5m --wait 1m) && ...\n"
    "See rcoord(1) for the key layout and guarantees.";

// Where the verb path ends, for the hint of a usage error (`rcoord lock acquire --help`).
std::string help_hint(const CLI::App& app) {
  std::string path = "rcoord";
  const CLI::App* current = &app;
  for (;;) {
    auto subs = current->get_subcommands();
    if (subs.empty()) break;
    current = subs.front();
    path += " " + current->get_name();
  }
  return "see '" + path + " --help'";
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// `rcoord lok`: CLI11 sees an unexpected positional; name the nearest command instead.
std::string suggestion(const CLI::App& app, int argc, char** argv) {
  const CLI::App* level = &app;
  while (!level->get_subcommands().empty()) level = level->get_subcommands().front();
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.empty() || word[0] == '-' || word == level->get_name()) continue;
    std::string best;
    std::size_t best_distance = 3;
    for (const auto* sub : level->get_subcommands({})) {
      if (sub->get_name() == word) return {};
      std::size_t d = edit_distance(word, sub->get_name());
      if (sub->get_name().rfind(word, 0) == 0) d = 0;
      if (d < best_distance) {
        best = sub->get_name();
        best_distance = d;
      }
    }
    if (!best.empty()) {
      std::string message = "unknown command '";
      message += word;
      message += "': did you mean '";
      message += best;
      message += "'?";
      return message;
    }
    return {};
  }
  return {};
}

// Every top-level command and the function that registers it. Building CLI11's tree is
// most of a one-shot command's start-up, so only the named command's group is built.
struct Command {
  std::string_view name;
  void (*add)(CLI::App&, rcoord::cmd::Context&);
};
constexpr Command kCommands[] = {
    {"bloom", rcoord::cmd::add_bloom},     {"complete", rcoord::cmd::add_complete},
    {"doctor", rcoord::cmd::add_doctor},   {"ls", rcoord::cmd::add_ls},
    {"lock", rcoord::cmd::add_lock},       {"limit", rcoord::cmd::add_limit},
    {"pf", rcoord::cmd::add_pf},           {"ping", rcoord::cmd::add_ops},
    {"sem", rcoord::cmd::add_sem},         {"queue", rcoord::cmd::add_queue},
    {"elect", rcoord::cmd::add_elect},     {"signal", rcoord::cmd::add_signal},
    {"latch", rcoord::cmd::add_latch},     {"top", rcoord::cmd::add_top},
    {"metrics", rcoord::cmd::add_metrics},
};

// Global options that take a value in the next argument (`-p 6379`).
bool takes_value(std::string_view arg) {
  static constexpr std::string_view kWithValue[] = {"-u",
                                                    "--url",
                                                    "--password-file",
                                                    "--timeout",
                                                    "--prefix",
                                                    "-o",
                                                    "--output",
                                                    "--config",
                                                    "-h",
                                                    "-p",
                                                    "-n",
                                                    "-a",
                                                    "--pass",
                                                    "--user",
                                                    "-s",
                                                    "--tls-ca",
                                                    "--cacert",
                                                    "--tls-cert",
                                                    "--cert",
                                                    "--tls-key",
                                                    "--key",
                                                    "--sni",
                                                    "--sentinel",
                                                    "--sentinel-master",
                                                    "--wait-replicas"};
  return std::find(std::begin(kWithValue), std::end(kWithValue), arg) != std::end(kWithValue);
}

// The command word of argv (`lock` in `rcoord -p 6379 lock acquire x`), or "".
std::string_view command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") return {};
    if (arg.empty() || arg[0] != '-') return arg;
    if (takes_value(arg)) ++i;
  }
  return {};
}

void add_commands(CLI::App& app, rcoord::cmd::Context& ctx, std::string_view word) {
  void (*only)(CLI::App&, rcoord::cmd::Context&) = nullptr;
  for (const auto& c : kCommands) {
    if (c.name == word) only = c.add;
  }
  if (only != nullptr) {
    only(app, ctx);
    return;
  }
  // --help, or an unknown word: build everything, so help lists all and typos get a hint.
  void (*last)(CLI::App&, rcoord::cmd::Context&) = nullptr;
  for (const auto& c : kCommands) {
    if (c.add != last) c.add(app, ctx);
    last = c.add;
  }
}

void blank_from(char* text, std::size_t from) {
  for (char* p = text + std::min(from, std::strlen(text)); *p != '\0'; ++p) *p = '*';
}

// `redis://user:secret@host` -> `redis://user:******@host`, in place.
void blank_url_password(char* url) {
  std::string_view text(url);
  auto scheme = text.find("://");
  if (scheme == std::string_view::npos) return;
  auto at = text.find('@', scheme + 3);
  if (at == std::string_view::npos || text.find('/', scheme + 3) < at) return;
  auto colon = text.substr(0, at).find(':', scheme + 3);
  std::size_t from = colon == std::string_view::npos ? scheme + 3 : colon + 1;
  for (std::size_t i = from; i < at; ++i) url[i] = '*';
}

// A password given with -a or inside --url is visible in ps for the whole life of the
// process (a `lock run` may live for hours). Once parsed, it is overwritten in place, which
// is what /proc/PID/cmdline shows. The command after `--` is left alone.
void hide_secrets(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") return;
    if ((arg == "-a" || arg == "--pass") && i + 1 < argc) {
      blank_from(argv[++i], 0);
    } else if (arg.rfind("--pass=", 0) == 0) {
      blank_from(argv[i], 7);
    } else if (arg.size() > 2 && arg.rfind("-a", 0) == 0) {
      blank_from(argv[i], arg[2] == '=' ? 3 : 2);
    } else if ((arg == "-u" || arg == "--url") && i + 1 < argc) {
      blank_url_password(argv[++i]);
    } else if (arg.rfind("--url=", 0) == 0) {
      blank_url_password(argv[i] + 6);
    }
  }
}

int run(int argc, char** argv) {
  rcoord::cmd::Context ctx;
  CLI::App app{"rcoord: locks, semaphores and other coordination primitives on Redis", "rcoord"};
  app.set_help_flag("--help", "Print help and exit");
  app.set_version_flag("--version", "rcoord " RCOORD_VERSION);
  app.footer(kFooter);
  // Global options are accepted after the verb too.
  app.fallthrough();
  ctx.add_global_options(app);
  app.require_subcommand(1);
  // `rcoord --version` needs no command at all: build none (start-up is its whole cost).
  bool version_only = argc == 2 && std::string_view(argv[1]) == "--version";
  if (!version_only) add_commands(app, ctx, command_word(argc, argv));
  // `rcoord --help` lists the primitives apart from the operator commands.
  for (auto* sub : app.get_subcommands({})) {
    const std::string& name = sub->get_name();
    bool ops =
        name == "ping" || name == "doctor" || name == "ls" || name == "top" || name == "metrics";
    sub->group(ops ? "Operator commands" : "Primitives");
  }

  try {
    app.parse(argc, argv);
    hide_secrets(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::string nearest = suggestion(app, argc, argv);
    rcoord::Error usage(rcoord::kUsage, nearest.empty() ? e.what() : nearest, help_hint(app));
    rcoord::Printer::error(usage);
    return rcoord::kUsage;
  }

  try {
    ctx.resolve();
    return ctx.action();
  } catch (const rcoord::Error& e) {
    rcoord::Printer::error(e);
    if (e.code() == rcoord::kInterrupted && rcoord::signals::pending() != 0) {
      return 128 + rcoord::signals::pending();
    }
    return e.code();
  } catch (const std::exception& e) {
    rcoord::Printer::error(rcoord::Error(
        rcoord::kServer, std::string("internal error: ") + e.what(), "please report this"));
    return rcoord::kServer;
  }
}

}  // namespace

// Building the command tree and printing an error can throw too (out of memory, a bad
// stream): still one line and exit 4, never std::terminate.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rcoord: internal error: %s (please report this)\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "rcoord: internal error (please report this)\n");
  }
  return rcoord::kServer;
}
