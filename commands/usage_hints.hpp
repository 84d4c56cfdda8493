#pragma once
/// What a usage error says beyond CLI11's words: the nearest command or option to a typo, a
/// run form's command given without `--` before it, and the flock letters that rcoord reads
/// as redis-cli's. The command line is walked over the command tree as CLI11 would walk it
/// (commands, options and the values they take), without parsing it.

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rcoord::cmd {

/// Edits between `a` and `b`: insertions, deletions, substitutions, and swaps of two
/// neighbours (`lokc` is one edit from `lock`).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate a typo most likely meant: one that starts with `word`, else the nearest
/// within 2 edits (1 for a word of 3 letters or fewer); "" when none is near.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

/// A better message than CLI11's for a command line that did not parse under `root`: an
/// unknown command or option with the nearest one, a group named without its command, a
/// command that rcoord does not have (`completion`, `help`). "" when it knows no better.
/// `words` are the arguments without the program name.
std::string usage_hint(const CLI::App& root, const std::vector<std::string>& words);

/// What main checks before parsing, as CLI11 alone would take these command lines silently:
/// - a run form's command given without `--` whose own options land among rcoord's
///   (`lock run job rsync -a src dst` would give `-a src` to rcoord as a password);
/// - `-n` or `-s` after `lock run`, where flock users mean --nonblock and --shared (rcoord
///   reads them as redis-cli's database and socket: they count before the group only).
/// Throws Error(kUsage) with the hint. `words` as for usage_hint().
void check_before_parse(const CLI::App& root, const std::vector<std::string>& words);

/// Whether `--timeout` (the global I/O timeout) was given after `lock run`: a flock user's
/// --timeout, which waits in flock, and which the busy message then explains.
bool timeout_after_lock_run(const CLI::App& root, const std::vector<std::string>& words);

}  // namespace rcoord::cmd
