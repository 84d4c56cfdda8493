#pragma once
/// The config file: a small TOML subset holding defaults for global options.
///
///   url = "redis://10.0.0.5:6379/2"     # strings, "basic" or 'literal'
///   timeout = "500ms"
///   quiet = false                       # booleans and integers too
///   url = ["redis://a", "redis://b"]    # arrays of strings (repeatable options)
///
/// Keys are the long option names. Tables ([section]) are not supported.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rcoord {

using ConfigValues = std::map<std::string, std::vector<std::string>, std::less<>>;

/// Parses config text. Throws Error(kUsage) naming `origin` and the line.
ConfigValues parse_config(std::string_view text, std::string_view origin);

/// A config file holds a few defaults: a larger one is a mistake (`--config /dev/zero`).
constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

/// Reads and parses a config file. Throws Error(kUsage) if it cannot be read or is larger than
/// kMaxConfigBytes.
ConfigValues load_config(const std::string& path);

/// Reads a whole file of at most `max_bytes` (a password file, a config file, a message), or
/// standard input when `path` is "-" and `stdin_dash` is set. Throws Error(kUsage) naming
/// `what` when it cannot be read (missing, a directory, unreadable) and when it is larger than
/// `max_bytes` (`/dev/zero` ends there, without filling memory), with `hint` saying what to do.
std::string read_small_file(const std::string& path, std::string_view what, std::size_t max_bytes,
                            std::string_view hint, bool stdin_dash = false);

/// `512 MiB`, `64 KiB`, `100 bytes`: a size limit as messages show it.
std::string format_size(std::size_t bytes);

}  // namespace rcoord
