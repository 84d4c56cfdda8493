#include "usage_hints.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "errors.hpp"

namespace rcoord::cmd {
namespace {

// Where a walk over the command line stopped, and why.
struct Walk {
  enum class End {
    kDone,            // every word walked
    kSeparator,       // at `--`
    kUnknownCommand,  // a word where a command was due, that is none of them
    kUnknownOption,   // an option that neither the command nor its groups have
  };
  End end = End::kDone;
  const CLI::App* level = nullptr;  // the deepest command reached
  std::size_t at = 0;               // the word it stopped at
  /// For a run form (a command with a `command` positional): the word its command starts
  /// at, when given before any `--`.
  std::optional<std::size_t> command_start;
  /// The options met after the command words, as typed (`-n`, `--timeout`), with the word
  /// each was at; a short option's letter in a cluster is listed as `-x`.
  std::vector<std::pair<std::string, std::size_t>> options;
};

// The option named `name` ("--ttl", "-w") where `level` or a group above it has it (global
// options fall through to every command).
const CLI::Option* find_option(const CLI::App* level, const std::string& name) {
  for (const CLI::App* app = level; app != nullptr; app = app->get_parent()) {
    if (const CLI::Option* opt = app->get_option_no_throw(name)) return opt;
  }
  return nullptr;
}

// A flag expects no value (CLI11 gives it expected(0)); an option one or more.
bool takes_value(const CLI::Option* opt) { return opt->get_expected_max() > 0; }

const CLI::App* find_command(const CLI::App* level, std::string_view word) {
  for (const CLI::App* sub : level->get_subcommands({})) {
    if (sub->get_name() == word) return sub;
  }
  return nullptr;
}

bool has_commands(const CLI::App* level) { return !level->get_subcommands({}).empty(); }

// How many positionals a run form takes before its command (NAME, or Q), or nullopt when
// `level` is not a run form.
std::optional<std::size_t> words_before_command(const CLI::App* level) {
  std::size_t before = 0;
  bool run_form = false;
  for (const CLI::Option* opt : level->get_options()) {
    if (!opt->get_positional()) continue;
    if (opt->get_name() == "command") {
      run_form = true;
    } else {
      ++before;
    }
  }
  if (!run_form) return std::nullopt;
  return before;
}

Walk walk(const CLI::App& root, const std::vector<std::string>& words) {
  Walk w;
  w.level = &root;
  std::size_t positionals = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    w.at = i;
    if (word == "--") {
      w.end = Walk::End::kSeparator;
      return w;
    }
    if (word.size() > 2 && word.starts_with("--")) {
      std::string name = word.substr(0, word.find('='));
      const CLI::Option* opt = find_option(w.level, name);
      if (opt == nullptr) {
        w.end = Walk::End::kUnknownOption;
        return w;
      }
      w.options.emplace_back(name, i);
      if (name.size() == word.size() && takes_value(opt)) ++i;
      continue;
    }
    if (word.size() > 1 && word[0] == '-') {
      // A cluster of short options (`-qw5`): flags, then at most one that takes a value,
      // the rest of the word or the next one.
      for (std::size_t k = 1; k < word.size(); ++k) {
        std::string name = {'-', word[k]};
        const CLI::Option* opt = find_option(w.level, name);
        if (opt == nullptr) {
          w.end = Walk::End::kUnknownOption;
          return w;
        }
        w.options.emplace_back(name, i);
        if (takes_value(opt)) {
          if (k + 1 == word.size()) ++i;
          break;
        }
      }
      continue;
    }
    if (has_commands(w.level)) {
      const CLI::App* sub = find_command(w.level, word);
      if (sub == nullptr) {
        w.end = Walk::End::kUnknownCommand;
        return w;
      }
      w.level = sub;
      positionals = 0;
      w.options.clear();
      continue;
    }
    auto before = words_before_command(w.level);
    if (before && positionals == *before && !w.command_start) w.command_start = i;
    ++positionals;
  }
  w.at = words.size();
  return w;
}

// `lock run`, as messages name a command.
std::string path_of(const CLI::App* level) {
  std::string path;
  for (const CLI::App* app = level; app != nullptr && app->get_parent() != nullptr;
       app = app->get_parent()) {
    path = app->get_name() + (path.empty() ? "" : " ") + path;
  }
  return path;
}

bool is_lock_run(const CLI::App* level) { return path_of(level) == "lock run"; }

std::vector<std::string> command_names(const CLI::App* level) {
  std::vector<std::string> names;
  for (const CLI::App* sub : level->get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

// `a, b or c`
std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

// Every name an option of `level` or a group above it goes by (`--ttl`, `-w`).
std::vector<std::string> option_names(const CLI::App* level) {
  std::vector<std::string> names;
  for (const CLI::App* app = level; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* opt : app->get_options()) {
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
      for (const auto& s : opt->get_snames()) names.push_back("-" + s);
    }
  }
  return names;
}

std::string unknown_command(const CLI::App* level, const std::string& word) {
  if (level->get_parent() == nullptr) {
    if (word == "completion" || word == "completions") {
      return "there is no 'completion' command: the bash, zsh and fish completions are "
             "installed with rcoord; COMPLETION in rcoord(1) says where";
    }
    if (word == "help") return "there is no 'help' command: give --help after any command";
  }
  std::string meant = nearest(word, command_names(level));
  if (!meant.empty()) return fmt::format("unknown command '{}': did you mean '{}'?", word, meant);
  if (level->get_parent() == nullptr) return fmt::format("unknown command '{}'", word);
  return fmt::format("unknown command '{}': 'rcoord {}' has {}", word, path_of(level),
                     one_of(command_names(level)));
}

std::string unknown_option(const CLI::App* level, const std::string& word) {
  std::string name = word.substr(0, word.find('='));
  std::string where = level->get_parent() == nullptr ? "" : " for '" + path_of(level) + "'";
  // A cluster of short options: the letter that is none of them.
  if (!name.starts_with("--") && name.size() > 2) {
    for (std::size_t k = 1; k < name.size(); ++k) {
      std::string letter = {'-', name[k]};
      const CLI::Option* opt = find_option(level, letter);
      if (opt == nullptr) return fmt::format("unknown option '{}' in '{}'{}", letter, word, where);
      if (takes_value(opt)) break;
    }
  }
  std::string meant = name.starts_with("--") ? nearest(name, option_names(level)) : std::string();
  if (!meant.empty()) {
    return fmt::format("unknown option '{}'{}: did you mean '{}'?", name, where, meant);
  }
  return fmt::format("unknown option '{}'{}", name, where);
}

// The command line again, `--` put before the command, quoted for a shell where needed.
std::string with_separator(const std::vector<std::string>& words, std::size_t command_start) {
  std::string line = "rcoord";
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i == command_start) line += " --";
    const std::string& w = words[i];
    bool plain = !w.empty() && w.find_first_not_of(
                                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789-_./:=@%+,") == std::string::npos;
    if (plain) {
      line += " " + w;
      continue;
    }
    line += " '";
    for (char c : w) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += "'";
  }
  return line;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: the Levenshtein table, plus a swap of neighbours as one edit.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  // Past the dashes, a word of 3 letters or fewer is a guess at 2 edits (`pf` from `ls`).
  std::string_view bare = word.substr(std::min(word.find_first_not_of('-'), word.size()));
  std::size_t limit = bare.size() <= 3 ? 1 : 2;
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    if (c == word) return c;
    std::size_t d = edit_distance(word, c);
    if (bare.size() >= 2 && c.starts_with(word)) d = 0;
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::string usage_hint(const CLI::App& root, const std::vector<std::string>& words) {
  Walk w = walk(root, words);
  switch (w.end) {
    case Walk::End::kUnknownCommand:
      return unknown_command(w.level, words[w.at]);
    case Walk::End::kUnknownOption:
      return unknown_option(w.level, words[w.at]);
    case Walk::End::kDone:
    case Walk::End::kSeparator:
      break;
  }
  if (!has_commands(w.level)) return {};
  if (w.level->get_parent() == nullptr) return "no command given";
  return fmt::format("'rcoord {}' needs a command: {}", path_of(w.level),
                     one_of(command_names(w.level)));
}

void check_before_parse(const CLI::App& root, const std::vector<std::string>& words) {
  Walk w = walk(root, words);
  if (is_lock_run(w.level)) {
    for (const auto& [name, at] : w.options) {
      if (w.command_start && at > *w.command_start) break;
      if (name == "-n") {
        throw Error(kUsage,
                    "-n after 'lock run' would choose a Redis database (as in redis-cli), not "
                    "flock's --nonblock",
                    "lock run tries once unless given --wait; to choose a database, put -n "
                    "before the group: rcoord -n 1 lock run ...");
      }
      if (name == "-s") {
        throw Error(kUsage,
                    "-s after 'lock run' would name a unix socket (as in redis-cli), not flock's "
                    "--shared",
                    "use --shared for a reader lock; to name a socket, put -s before the group: "
                    "rcoord -s /run/redis.sock lock run ...");
      }
    }
  }
  if (!w.command_start) return;
  for (const auto& [name, at] : w.options) {
    if (at <= *w.command_start) continue;
    throw Error(kUsage,
                fmt::format("'{}' after the command '{}' would be read as an option of rcoord",
                            words[at], words[*w.command_start]),
                "put -- before the command: " + with_separator(words, *w.command_start));
  }
  // An option rcoord does not know, after the command, stops the walk: still the command's.
  if (w.end == Walk::End::kUnknownOption && w.at > *w.command_start) {
    throw Error(kUsage,
                fmt::format("'{}' after the command '{}' would be read as an option of rcoord",
                            words[w.at], words[*w.command_start]),
                "put -- before the command: " + with_separator(words, *w.command_start));
  }
}

bool timeout_after_lock_run(const CLI::App& root, const std::vector<std::string>& words) {
  Walk w = walk(root, words);
  if (!is_lock_run(w.level)) return false;
  return std::any_of(w.options.begin(), w.options.end(),
                     [](const auto& option) { return option.first == "--timeout"; });
}

}  // namespace rcoord::cmd
