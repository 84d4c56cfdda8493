#pragma once
/// Where everything rcoord prints goes: data to stdout (text or JSON Lines), diagnostics to
/// stderr. Commands build a result, and the printer renders it; nothing else writes.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "errors.hpp"

namespace rcoord {

enum class Format { kText, kJson };

/// stdout could not take a result: a full disk, a closed stdout, a reader that went away.
/// Exit 3 with one line; when the reader went away (EPIPE), 141 and no message, as the
/// default SIGPIPE would end it (rcoord ignores SIGPIPE so that a take is given back first).
class OutputError : public Error {
 public:
  explicit OutputError(int err);
  /// The same failure after a write the call made (`made`: "pushed", "released"): the message
  /// says that it was made, so that a retry does not make it twice.
  OutputError(int err, std::string_view made);
  bool broken_pipe() const;
  int error_number() const { return err_; }

 private:
  int err_;
};

class Printer {
 public:
  Printer() = default;
  Printer(Format format, bool quiet) : format_(format), quiet_(quiet) {}

  Format format() const { return format_; }
  bool quiet() const { return quiet_; }
  bool json() const { return format_ == Format::kJson; }

  /// Prints a result: its JSON object as one line, or its text form (one fact per line).
  /// Views are found by ADL: `to_json(nlohmann::ordered_json&, const T&)`, `std::string
  /// to_text(const T&)`.
  template <typename T>
  void emit(const T& result) {
    if (quiet_) return;
    if (format_ == Format::kJson) {
      nlohmann::ordered_json j;
      to_json(j, result);
      write_json(j);
    } else {
      write_text(to_text(result));
    }
  }

  /// One JSON object on its own line (flushed: lines are consumed as a stream). Nothing
  /// with -q, like everything written to stdout. Every write to stdout throws OutputError
  /// when stdout does not take it (a result nobody can read is no result).
  void write_json(const nlohmann::ordered_json& j) const;
  /// Text as is (a trailing newline is added when missing). Nothing for empty text.
  void write_text(std::string_view text) const;
  /// Bytes exactly as given, nothing added (binary records that end in NUL, e.g. `-0`
  /// output). Nothing with -q.
  void write_raw(std::string_view bytes) const;

  /// A "no" answer or a note for the human at the terminal: one line on stderr, text mode only
  /// (in JSON mode the result object already says it), never with -q.
  void note(std::string_view line);
  /// A warning that must be seen whatever the format (e.g. a lock that could not be released).
  static void warn(std::string_view line);
  /// The one-line error message of SPEC §2. In JSON mode (set_json_errors) a second line
  /// follows it on stderr: `{"error":WHAT,"hint":HINT,"exit_code":N}` (no hint when there is
  /// none), so that a program reading JSON gets the failure as JSON too.
  static void error(const Error& e);
  /// Whether error() adds its JSON line: set from -o json/--json on the command line before
  /// it is parsed, then from the settings once they are resolved.
  static void set_json_errors(bool on);

 private:
  Format format_ = Format::kText;
  bool quiet_ = false;
};

/// Dumps JSON that may carry binary strings: invalid UTF-8 bytes become U+FFFD.
std::string dump_json(const nlohmann::ordered_json& j);

/// Puts `"name": name` first in the object `j` (the one naming rule of JSON output: every
/// result names its object `name`), replacing a `name` it had.
void name_first(nlohmann::ordered_json& j, std::string_view name);

/// A result whose type does not carry its object's name (a limit's decision, a queue's
/// message): JSON gets `name` first (name_first), text is the result's own.
template <typename T>
struct Named {
  std::string_view name;
  const T& result;
};
template <typename T>
Named<T> named(std::string_view name, const T& result) {
  return {name, result};
}
template <typename T>
void to_json(nlohmann::ordered_json& j, const Named<T>& r) {
  to_json(j, r.result);
  name_first(j, r.name);
}
template <typename T>
std::string to_text(const Named<T>& r) {
  return to_text(r.result);
}

}  // namespace rcoord
