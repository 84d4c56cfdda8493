#include "output.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "text.hpp"
#include "url.hpp"

namespace rcoord {
namespace {

bool json_errors = false;  // Printer::set_json_errors

bool stderr_colour() {
  static const bool colour = isatty(STDERR_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
  return colour;
}

// A message quotes names and values the user gave (a name may hold a newline or an escape
// sequence): they are shown escaped (escape_text), so a message stays one line and cannot
// drive the terminal.
void write_stderr(std::string_view prefix_colour, std::string_view line) {
  std::string out;
  if (stderr_colour()) {
    out += prefix_colour;
    out += escape_text(line);
    out += "\033[0m";
  } else {
    out += escape_text(line);
  }
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stderr);
}

// Writes all of `bytes` to stdout and flushes, or throws OutputError.
void write_stdout(std::string_view bytes) {
  int err = 0;
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) {
    err = errno;
  }
  if (std::fflush(stdout) != 0 && err == 0) err = errno;
  if (err == 0 && std::ferror(stdout) != 0) err = EIO;  // failed earlier, reason gone
  if (err != 0) throw OutputError(err);
}

}  // namespace

OutputError::OutputError(int err)
    : Error(kConnection, fmt::format("cannot write the result to stdout: {}", std::strerror(err)),
            "check where stdout goes: a full disk, a closed descriptor"),
      err_(err) {}

OutputError::OutputError(int err, std::string_view made)
    : Error(kConnection,
            fmt::format("{}, but the result could not be written to stdout: {}", made,
                        std::strerror(err)),
            "the change was made: do not repeat it; check where stdout goes"),
      err_(err) {}

bool OutputError::broken_pipe() const { return err_ == EPIPE; }

std::string dump_json(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void name_first(nlohmann::ordered_json& j, std::string_view name) {
  nlohmann::ordered_json out{{"name", std::string(name)}};
  for (const auto& [field, value] : j.items()) {
    if (field != "name") out[field] = value;
  }
  j = std::move(out);
}

void Printer::write_json(const nlohmann::ordered_json& j) const {
  if (quiet_) return;
  std::string line = dump_json(j);
  line += '\n';
  write_stdout(line);
}

void Printer::write_text(std::string_view text) const {
  if (quiet_ || text.empty()) return;
  if (text.back() == '\n') {
    write_stdout(text);
  } else {
    std::string line(text);
    line += '\n';
    write_stdout(line);
  }
}

void Printer::write_raw(std::string_view bytes) const {
  if (quiet_ || bytes.empty()) return;
  write_stdout(bytes);
}

void Printer::note(std::string_view line) {
  if (quiet_ || format_ == Format::kJson) return;
  write_stderr("\033[33m", line);
}

// Warnings and errors may quote a URL (a value the user gave): its password never shows.
void Printer::warn(std::string_view line) { write_stderr("\033[33m", mask_urls_in(line)); }

void Printer::error(const Error& e) {
  // The hint is rcoord's own text (it may show a URL template): only what() is masked.
  std::string what = mask_urls_in(e.what());
  write_stderr("\033[31m", format_error(Error(e.code(), what, e.hint())));
  if (!json_errors) return;
  nlohmann::ordered_json j{{"error", what}};
  if (!e.hint().empty()) j["hint"] = e.hint();
  j["exit_code"] = static_cast<int>(e.code());
  std::string line = dump_json(j);  // escaped by JSON itself: one line, no control byte
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void Printer::set_json_errors(bool on) { json_errors = on; }

}  // namespace rcoord
