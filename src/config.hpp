#pragma once
/// The config file: a small TOML subset holding defaults for global options.
///
///   url = "redis://10.0.0.5:6379/2"     # strings, "basic" or 'literal'
///   timeout = "500ms"
///   quiet = false                       # booleans and integers too
///   url = ["redis://a", "redis://b"]    # arrays of strings (repeatable options)
///
/// Keys are the long option names. Tables ([section]) are not supported.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rcoord {

using ConfigValues = std::map<std::string, std::vector<std::string>, std::less<>>;

/// Parses config text. Throws Error(kUsage) naming `origin` and the line.
ConfigValues parse_config(std::string_view text, std::string_view origin);

/// Reads and parses a config file. Throws Error(kUsage) if it cannot be read.
ConfigValues load_config(const std::string& path);

/// Reads a whole small file (password, config). Throws Error(kUsage) naming `what`.
std::string read_small_file(const std::string& path, std::string_view what);

}  // namespace rcoord
