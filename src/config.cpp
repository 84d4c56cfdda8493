#include "config.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "errors.hpp"
#include "url.hpp"

namespace rcoord {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.front())) != 0))
    s.remove_prefix(1);
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) != 0))
    s.remove_suffix(1);
  return s;
}

// Whether the value of config key `key` may be a secret, never to be shown in a message: a
// password, a token, credentials, whatever the key is called (the file may hold keys rcoord
// does not know, and a mistake is reported before the key is checked).
bool secret_key(std::string_view key) {
  std::string lower;
  for (char c : key) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : {"pass", "auth", "secret", "token", "cred", "key"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

class LineParser {
 public:
  /// `secret`: the value must never be shown (secret_key()).
  LineParser(std::string_view line, std::string_view origin, int number, bool secret = false)
      : s_(line), origin_(origin), number_(number), secret_(secret) {}

  [[noreturn]] void fail(std::string_view why) const {
    throw Error(kUsage, fmt::format("bad config {}:{}: {}", origin_, number_, why),
                R"(write key = "value" lines with long option names, e.g. timeout = "2s")");
  }

  std::vector<std::string> values() {
    skip_space();
    std::vector<std::string> out;
    if (peek() == '[') {
      ++pos_;
      skip_space();
      while (peek() != ']') {
        out.push_back(scalar());
        skip_space();
        if (peek() == ',') {
          ++pos_;
          skip_space();
        } else if (peek() != ']') {
          fail("expected ',' or ']' in an array");
        }
      }
      ++pos_;
    } else {
      out.push_back(scalar());
    }
    skip_space();
    if (pos_ < s_.size() && s_[pos_] != '#') fail("unexpected text after the value");
    return out;
  }

 private:
  char peek() const {
    if (pos_ >= s_.size()) fail("unexpected end of line");
    return s_[pos_];
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  std::string scalar() {
    char c = peek();
    if (c == '"') return basic_string();
    if (c == '\'') return literal_string();
    std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ']' && s_[pos_] != '#' &&
           s_[pos_] != ' ' && s_[pos_] != '\t') {
      ++pos_;
    }
    std::string bare(s_.substr(start, pos_ - start));
    if (bare == "true" || bare == "false") return bare;
    if (bare.empty()) fail("missing value");
    for (char d : bare) {
      if ((std::isdigit(static_cast<unsigned char>(d)) == 0) && d != '-' && d != '+' && d != '.' &&
          d != '_') {
        // The value is shown masked: an unquoted `url = redis://:pw@host` lands here, and
        // `password = S3cret` too (that one not at all).
        if (secret_) fail("the value is not quoted (not shown: it may be a secret); quote strings");
        fail(fmt::format("'{}' is not a value: quote strings", mask_url(bare)));
      }
    }
    return bare;
  }
  std::string basic_string() {
    ++pos_;
    std::string out;
    for (;;) {
      char c = peek();
      ++pos_;
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = peek();
      ++pos_;
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        default:
          fail("unknown escape in a string");
      }
    }
  }
  std::string literal_string() {
    ++pos_;
    auto end = s_.find('\'', pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }

  std::string_view s_;
  std::string_view origin_;
  int number_;
  bool secret_;
  std::size_t pos_ = 0;
};

}  // namespace

ConfigValues parse_config(std::string_view text, std::string_view origin) {
  ConfigValues values;
  int number = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    LineParser parser(line, origin, number);
    if (line.front() == '[')
      parser.fail("tables ([section]) are not supported; use top-level keys");
    auto eq = line.find('=');
    if (eq == std::string_view::npos) parser.fail("expected key = value");
    std::string key(trim(line.substr(0, eq)));
    if (key.empty()) parser.fail("missing key");
    LineParser value_parser(line.substr(eq + 1), origin, number, secret_key(key));
    values[key] = value_parser.values();
  }
  return values;
}

std::string format_size(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

std::string read_small_file(const std::string& path, std::string_view what, std::size_t max_bytes,
                            std::string_view hint, bool stdin_dash) {
  // POSIX read, not an ifstream: an ifstream opens a directory and then reads nothing, which
  // would pass for an empty file (an empty password, an empty config).
  auto fail = [&](int error) {
    return Error(kUsage, fmt::format("cannot read {} '{}': {}", what, path, std::strerror(error)),
                 "check the path and its permissions");
  };
  auto too_large = [&] {
    return Error(kUsage,
                 fmt::format("{} '{}' is larger than {}", what, path, format_size(max_bytes)),
                 std::string(hint));
  };
  bool from_stdin = stdin_dash && path == "-";
  int fd = from_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail(errno);
  auto close_fd = [&] {
    if (!from_stdin) ::close(fd);
  };
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    // A regular file says its size: refuse a large one without reading it.
    int error = S_ISDIR(st.st_mode) ? EISDIR : 0;
    bool large = S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes;
    if (error != 0 || large) {
      close_fd();
      if (error != 0) throw fail(error);
      throw too_large();
    }
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      // A device or a pipe says nothing of its size: stop one byte past the limit.
      if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
        close_fd();
        throw too_large();
      }
      text.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      int error = errno;
      close_fd();
      throw fail(error);
    }
  }
  close_fd();
  return text;
}

ConfigValues load_config(const std::string& path) {
  return parse_config(read_small_file(path, "config file", kMaxConfigBytes,
                                      "a config file holds a few option defaults; check --config"),
                      path);
}

}  // namespace rcoord
