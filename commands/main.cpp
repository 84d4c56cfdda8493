// rcoord: coordination primitives on Redis, for shell scripts, cron and CI.
// Parses the command line, runs the chosen verb, and maps errors to the exit codes of SPEC §2.

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bloom_command.hpp"
#include "complete_command.hpp"
#include "context.hpp"
#include "elect_command.hpp"
#include "errors.hpp"
#include "gate_command.hpp"
#include "help_command.hpp"
#include "history_command.hpp"
#include "limit_command.hpp"
#include "lock_command.hpp"
#include "metrics_command.hpp"
#include "notify.hpp"
#include "ops_command.hpp"
#include "queue_command.hpp"
#include "sem_command.hpp"
#include "signal_command.hpp"
#include "signals.hpp"
#include "top_command.hpp"
#include "usage_hints.hpp"

namespace {

// What --version prints: by CLI11 in a longer command line, by main alone.
constexpr const char* kVersionLine = "rcoord " RCOORD_VERSION;

constexpr const char* kFooter =
    "Exit codes: 0 yes, 1 no (busy, denied, absent), 2 usage, 3 connection, 4 server or data,\n"
    "5 lock, permit or leadership lost while the command ran; run forms exit with the\n"
    "command's code.\n"
    "Examples:\n"
    "  rcoord lock run nightly-backup -- ./backup.sh\n"
    "  TOKEN=$(rcoord lock acquire deploy --ttl 5m --wait 1m) && ...\n"
    "See rcoord(1) for the global options and the exit codes, a group's page,\n"
    "rcoord-GROUP(1), for its verbs and keys: rcoord GROUP --help --man (or\n"
    "rcoord help GROUP); docs/guarantees.md for what holds under which failures.";

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

// `rcoord version`, the word people type (git, docker, kubectl and go all have it): the same
// line as --version. It reads no config file and needs no server.
void add_version(CLI::App& app, rcoord::cmd::Context&) {
  app.add_subcommand("version", "Print the version and exit (as --version)")
      ->footer("Example: rcoord version");
}

// Every top-level command and the function that registers it. Building CLI11's tree is
// most of a one-shot command's start-up, so only the named command's group is built.
struct Command {
  std::string_view name;
  void (*add)(CLI::App&, rcoord::cmd::Context&);
};
void add_help_command(CLI::App& app, rcoord::cmd::Context& ctx);
constexpr Command kCommands[] = {
    {"bloom", rcoord::cmd::add_bloom},
    {"complete", rcoord::cmd::add_complete},
    {"doctor", rcoord::cmd::add_doctor},
    {"ls", rcoord::cmd::add_ls},
    {"lock", rcoord::cmd::add_lock},
    {"limit", rcoord::cmd::add_limit},
    {"pf", rcoord::cmd::add_pf},
    {"ping", rcoord::cmd::add_ops},
    {"sem", rcoord::cmd::add_sem},
    {"queue", rcoord::cmd::add_queue},
    {"elect", rcoord::cmd::add_elect},
    {"gate", rcoord::cmd::add_gate},
    {"signal", rcoord::cmd::add_signal},
    {"latch", rcoord::cmd::add_latch},
    {"top", rcoord::cmd::add_top},
    {"metrics", rcoord::cmd::add_metrics},
    {"rm", rcoord::cmd::add_rm},
    {"history", rcoord::cmd::add_history},
    {"version", add_version},
    {"help", add_help_command},
};

// `rcoord help GROUP` opens rcoord-GROUP(1): every command but these two has a page.
void add_help_command(CLI::App& app, rcoord::cmd::Context& ctx) {
  std::vector<std::string> groups;
  for (const auto& c : kCommands) {
    if (c.name != "version" && c.name != "help") groups.emplace_back(c.name);
  }
  rcoord::cmd::add_help(app, ctx, std::move(groups));
}

// The command word of argv (`lock` in `rcoord -p 6379 lock acquire x`), or "".
std::string_view command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") return {};
    if (arg.empty() || arg[0] != '-') return arg;
    if (rcoord::global_option_takes_value(arg)) ++i;
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

// The chosen verb's words (`lock acquire`) and the object it names: the first positional
// value given to the last subcommand, when it has one.
void note_chosen(const CLI::App& app, rcoord::cmd::Context& ctx) {
  std::string verb;
  const CLI::App* leaf = &app;
  while (!leaf->get_subcommands().empty()) {
    leaf = leaf->get_subcommands().front();
    verb += (verb.empty() ? "" : " ") + leaf->get_name();
  }
  std::string object;
  for (const CLI::Option* opt : leaf->get_options()) {
    if (opt->get_positional() && opt->count() > 0 && !opt->results().empty()) {
      object = opt->results().front();
      break;
    }
  }
  ctx.set_chosen(std::move(verb), std::move(object));
}

// A password's mask in the command line that ps shows: "****" whatever its length, so ps
// does not tell how long it is. (A password shorter than 4 bytes gets as many stars as it has
// bytes: the command line may not grow.)
std::string stars(std::size_t length) {
  std::string mask(std::min<std::size_t>(length, 4), '*');
  return mask;
}

// A URL with its secrets (the parts mask_url hides) replaced by stars.
std::string starred_url(std::string_view url) {
  std::string out;
  std::size_t done = 0;
  for (const auto& [from, to] : rcoord::secret_spans(url)) {
    out += url.substr(done, from - done);
    out += stars(to - from);
    done = to;
  }
  out += url.substr(done);
  return out;
}

// argv as ps should show it: the value of -a/--pass and a password inside --url masked. The
// command after `--` is left alone. Sets `secret` when there was a password to mask.
std::vector<std::string> shown_argv(int argc, char** argv, bool& secret) {
  std::vector<std::string> shown(argv, argv + argc);
  auto mask_password = [&](std::string& arg, std::size_t from) {
    if (arg.size() <= from) return;
    std::string mask = stars(arg.size() - from);
    arg.resize(from);
    arg += mask;
    secret = true;
  };
  auto mask_url = [&](std::string& arg, std::size_t from) {
    std::string masked = arg.substr(0, from) + starred_url(std::string_view(arg).substr(from));
    if (masked == arg) return;
    arg = std::move(masked);
    secret = true;
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value_at = [&](std::size_t after) {
      return arg.size() > after && arg[after] == '=' ? after + 1 : after;
    };
    if (arg == "--") break;
    if ((arg == "-a" || arg == "--pass") && i + 1 < argc) {
      ++i;
      mask_password(shown[static_cast<std::size_t>(i)], 0);
    } else if (arg.rfind("--pass=", 0) == 0) {
      mask_password(shown[static_cast<std::size_t>(i)], 7);
    } else if (arg.size() > 2 && arg.rfind("-a", 0) == 0) {
      mask_password(shown[static_cast<std::size_t>(i)], value_at(2));
    } else if ((arg == "-u" || arg == "--url") && i + 1 < argc) {
      ++i;
      mask_url(shown[static_cast<std::size_t>(i)], 0);
    } else if (arg.rfind("--url=", 0) == 0) {
      mask_url(shown[static_cast<std::size_t>(i)], 6);
    } else if (arg.size() > 2 && arg.rfind("-u", 0) == 0) {
      mask_url(shown[static_cast<std::size_t>(i)], value_at(2));
    }
  }
  return shown;
}

// A password given with -a or inside --url is visible in ps for the whole life of the
// process (a `lock run` may live for hours). Once parsed, the command line is written again
// in place (what /proc/PID/cmdline shows) with the passwords masked. The kernel lays the
// arguments end to end in one block: the ones after a masked password move up to close the
// gap, so the mask says nothing of the password's length. Returns whether there was one.
bool hide_secrets(int argc, char** argv) {
  bool secret = false;
  std::vector<std::string> shown = shown_argv(argc, argv, secret);
  if (!secret) return false;
  auto at = [&](int i) -> const std::string& { return shown[static_cast<std::size_t>(i)]; };
  bool contiguous = true;
  std::size_t needed = 0;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && argv[i] != argv[i - 1] + std::strlen(argv[i - 1]) + 1) contiguous = false;
    needed += at(i).size() + 1;
  }
  char* begin = argv[0];
  char* end = argv[argc - 1] + std::strlen(argv[argc - 1]) + 1;
  if (contiguous && needed <= static_cast<std::size_t>(end - begin)) {
    char* p = begin;
    for (int i = 0; i < argc; ++i) {
      const std::string& text = at(i);
      std::memcpy(p, text.c_str(), text.size() + 1);
      argv[i] = p;
      p += text.size() + 1;
    }
    std::memset(p, 0, static_cast<std::size_t>(end - p));
    return true;
  }
  // Not one block (never seen on Linux): mask each argument within its own bytes.
  for (int i = 1; i < argc; ++i) {
    std::size_t room = std::strlen(argv[i]);
    if (at(i) == argv[i]) continue;
    std::string text = at(i).size() <= room ? at(i) : std::string(room, '*');
    std::memcpy(argv[i], text.c_str(), text.size());
    std::memset(argv[i] + text.size(), 0, room - text.size());
  }
  return true;
}

// A standard descriptor that is closed would be taken by the first socket rcoord opens (a
// result "printed" to the server). Each closed one gets /dev/null, read-only: a closed stdout
// still fails every write, and a closed stdin reads as empty.
void occupy_closed_stdio() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      int null = open("/dev/null", O_RDONLY);
      if (null >= 0 && null != fd) {
        dup2(null, fd);
        close(null);
      }
    }
  }
}

// Whether the words before `--` hold `flag` (what follows `--` is the command's own).
bool given_before_dashes(int argc, char** argv, std::string_view flag) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") return false;
    if (arg == flag) return true;
  }
  return false;
}

// Whether the words ask for help: then every global option is registered, as the help lists
// them all.
bool asks_for_help(int argc, char** argv) { return given_before_dashes(argc, argv, "--help"); }

// Whether they ask for the manual too (`rcoord lock --help --man`).
bool asks_for_man(int argc, char** argv) { return given_before_dashes(argc, argv, "--man"); }

// `rcoord GROUP --help --man` opens rcoord-GROUP(1) as `rcoord help GROUP` does, and
// `rcoord --help --man` (or with help or version, which have no page) rcoord(1). An unknown
// command word is left to the parser, whose error names it: returns -1 then.
int show_manual(int argc, char** argv) {
  std::string_view word = command_word(argc, argv);
  std::string group;
  if (!word.empty() && word != "help" && word != "version") {
    bool known = false;
    for (const auto& c : kCommands) known = known || c.name == word;
    if (!known) return -1;
    group = word;
  }
  try {
    return rcoord::cmd::open_manual(group);
  } catch (const rcoord::Error& e) {
    rcoord::Printer::error(e);
    return e.code();
  }
}

// Whether the words before `--` ask for JSON output (-o json, --output=json, --json): then
// an error found before the settings are resolved (a command line that does not parse) is
// told as JSON too. As the settings do: --json wins, else the last -o.
bool asks_for_json(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    std::string_view next = i + 1 < argc ? std::string_view(argv[i + 1]) : std::string_view();
    if (arg == "--json") return true;
    if (arg == "-o" || arg == "--output") {
      json = next == "json";
    } else if (arg.starts_with("--output=")) {
      json = arg.substr(9) == "json";
    } else if (arg.starts_with("-o") && arg.size() > 2 && arg[2] != '-') {
      json = arg.substr(arg[2] == '=' ? 3 : 2) == "json";
    }
  }
  return json;
}

// whole_tree: register every global option. Otherwise only those the command line names are
// (registering one costs CLI11 some 20,000 instructions, a tenth of a millisecond for all of
// them): a command line that does not parse is parsed again with all of them, so that its
// error and hint are those of the whole tree.
int run(int argc, char** argv, bool whole_tree) {
  occupy_closed_stdio();
  rcoord::signals::ignore_sigpipe();
  rcoord::Printer::set_json_errors(asks_for_json(argc, argv));
  if (asks_for_help(argc, argv) && asks_for_man(argc, argv)) {
    int code = show_manual(argc, argv);
    if (code >= 0) return code;
  }
  rcoord::cmd::Context ctx;
  CLI::App app{"rcoord: locks, semaphores and other coordination primitives on Redis", "rcoord"};
  app.set_help_flag("--help", "Print help and exit");
  app.set_version_flag("--version", kVersionLine);
  bool man = false;
  app.add_flag("--man", man, "With --help: open the manual page, rcoord(1) or rcoord-GROUP(1)");
  app.footer(kFooter);
  // Global options are accepted after the verb too.
  app.fallthrough();
  std::span<char* const> words(argv + 1, static_cast<std::size_t>(argc > 0 ? argc - 1 : 0));
  std::function<bool(const rcoord::GlobalOption&)> named;  // empty: every one
  if (!whole_tree) {
    named = [words](const rcoord::GlobalOption& option) { return option.may_be_named_in(words); };
  }
  ctx.add_global_options(app, named);
  app.require_subcommand(1);
  add_commands(app, ctx, command_word(argc, argv));
  // `rcoord --help` lists the primitives apart from the operator commands.
  for (auto* sub : app.get_subcommands({})) {
    const std::string& name = sub->get_name();
    bool ops = name == "ping" || name == "doctor" || name == "ls" || name == "top" ||
               name == "metrics" || name == "rm" || name == "history" || name == "version" ||
               name == "help";
    sub->group(ops ? "Operator commands" : "Primitives");
  }

  std::vector<std::string> args(words.begin(), words.end());
  bool password_in_argv = false;
  try {
    // What CLI11 would take silently: a run form's command without `--`, flock's -n and -s.
    if (!asks_for_help(argc, argv)) rcoord::cmd::check_before_parse(app, args);
    app.parse(argc, argv);
    password_in_argv = hide_secrets(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help, --version (--help has the whole tree already: asks_for_help)
    if (e.get_exit_code() == 0) return app.exit(e);
    if (!whole_tree) return run(argc, argv, true);
    // An unknown word, or a group without its command: the words tell more than CLI11.
    std::string hint;
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr ||
        dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      hint = rcoord::cmd::usage_hint(app, args);
    }
    rcoord::Error usage(rcoord::kUsage, hint.empty() ? e.what() : hint, help_hint(app));
    rcoord::Printer::error(usage);
    return rcoord::kUsage;
  } catch (const rcoord::Error& e) {  // an option out of its bounds (options.hpp)
    rcoord::Printer::error(e);
    return e.code();
  }

  if (man) {
    rcoord::Error usage(rcoord::kUsage, "--man goes with --help",
                        "use 'rcoord GROUP --help --man' or 'rcoord help GROUP'");
    rcoord::Printer::error(usage);
    return rcoord::kUsage;
  }
  if (app.get_subcommands().front()->get_name() == "version") {
    std::puts(kVersionLine);
    return 0;
  }
  try {
    note_chosen(app, ctx);
    ctx.timeout_after_lock_run = rcoord::cmd::timeout_after_lock_run(app, args);
    ctx.resolve(app.get_subcommands().front()->get_name());
    for (const auto& warning : ctx.deprecations()) rcoord::Printer::warn(warning);
    // As redis-cli does; after resolve, so that a usage error stays one line.
    if (password_in_argv && !ctx.opts.no_auth_warning) {
      rcoord::Printer::warn(
          "rcoord: warning: a password on the command line (-a, --pass or inside --url) can be "
          "seen by other users in ps and in the shell's history (use --password-file or "
          "RCOORD_PASSWORD; --no-auth-warning silences this)");
    }
    return ctx.action();
  } catch (const rcoord::OutputError& e) {
    // The reader went away: end as the default SIGPIPE would have ended us, silently.
    if (e.broken_pipe()) return 128 + SIGPIPE;
    rcoord::Printer::error(e);
    return e.code();
  } catch (const rcoord::Error& e) {
    if (e.code() == rcoord::kInterrupted && rcoord::signals::pending() != 0) {
      // 128 + the signal, as a shell reports it: the JSON line names that exit code too.
      int code = 128 + rcoord::signals::pending();
      rcoord::Printer::error(rcoord::Error(static_cast<rcoord::Exit>(code), e.what(), e.hint()));
      return code;
    }
    rcoord::Printer::error(e);
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
  // `rcoord --version` alone needs no command tree, and CLI11 would answer it by throwing:
  // start-up is its whole cost, and the tree and the unwinding touch some ten pages more.
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    std::puts(kVersionLine);
    return 0;
  }
  // Before anything may start a command: the command must not inherit them.
  rcoord::notify::adopt_environment();
  try {
    return run(argc, argv, asks_for_help(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rcoord: internal error: %s (please report this)\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "rcoord: internal error (please report this)\n");
  }
  return rcoord::kServer;
}
