#include "identity.hpp"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <ctime>
#include <vector>

#include "config.hpp"
#include "errors.hpp"

namespace rcoord {
namespace {

constexpr char kSeparator = '\x1f';

std::string host_name() {
  std::array<char, HOST_NAME_MAX + 1> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

// The parts of `text` between the `separator`s (a trailing separator ends with an empty part).
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    auto at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// Files larger than this are not what they should be: the C library reads them instead.
constexpr std::size_t kMaxPasswdBytes = std::size_t{1} << 20;

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  for (;;) {
    auto start = text.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) return words;
    text.remove_prefix(start);
    auto end = text.find_first_of(" \t\r");
    words.push_back(text.substr(0, end));
    if (end == std::string_view::npos) return words;
    text.remove_prefix(end);
  }
}

// A system file read whole, or nullopt when it cannot be (missing, unreadable, too large).
std::optional<std::string> system_file(const char* path) {
  try {
    return read_small_file(path, "system file", kMaxPasswdBytes, "");
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The C library's first lookup costs some 75 µs of every take's start-up here (it tries the
// nscd socket twice, reads nsswitch.conf, then the files, in code run for the first time):
// when nsswitch.conf has passwd look in `files` first, that file gives the same answer read
// directly. Any other setup, or a uid not in the file, goes to getpwuid_r.
std::optional<std::string> user_from_files(uid_t uid) {
  auto conf = system_file("/etc/nsswitch.conf");
  if (!conf || !passwd_files_first(*conf)) return std::nullopt;
  auto passwd = system_file("/etc/passwd");
  if (!passwd) return std::nullopt;
  return passwd_name(*passwd, static_cast<std::uint32_t>(uid));
}

std::string effective_user() {
  uid_t uid = geteuid();
  if (auto name = user_from_files(uid)) return *name;
  std::array<char, 4096> buf{};
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buf.data(), buf.size(), &found) == 0 && found != nullptr &&
      found->pw_name != nullptr) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

// A field as stored: control bytes (the separator among them) become spaces.
std::string clean(std::string_view field) {
  std::string out(field);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') c = ' ';
  }
  return out;
}

}  // namespace

bool passwd_files_first(std::string_view conf) {
  for (std::string_view line : split(conf, '\n')) {
    line = line.substr(0, line.find('#'));
    line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
    constexpr std::string_view kDatabase = "passwd:";
    if (!line.starts_with(kDatabase)) continue;
    line.remove_prefix(kDatabase.size());
    auto words = words_of(line);
    // `files [SUCCESS=continue] ...` would go on after a success: left to the C library.
    return !words.empty() && words[0] == "files" && (words.size() < 2 || words[1][0] != '[');
  }
  return false;  // no passwd line: the C library's default, whatever this one's is
}

std::optional<std::string> passwd_name(std::string_view passwd, std::uint32_t uid) {
  const std::string wanted = std::to_string(uid);
  for (std::string_view line : split(passwd, '\n')) {
    if (line.empty() || line[0] == '+' || line[0] == '-' || line[0] == '#') continue;
    auto fields = split(line, ':');  // name:password:uid:...
    if (fields.size() > 2 && !fields[0].empty() && fields[2] == wanted) {
      return std::string(fields[0]);
    }
  }
  return std::nullopt;
}

Identity this_process(std::string cmd, std::string note) {
  return {host_name(), static_cast<std::int64_t>(getpid()), effective_user(), std::move(cmd),
          std::move(note)};
}

std::string command_basename(std::string_view argv0) {
  while (argv0.size() > 1 && argv0.back() == '/') argv0.remove_suffix(1);
  auto slash = argv0.rfind('/');
  if (slash == std::string_view::npos || slash + 1 == argv0.size()) return std::string(argv0);
  return std::string(argv0.substr(slash + 1));
}

std::optional<std::string> ci_run_link(
    const std::function<std::optional<std::string>(std::string_view)>& variable) {
  auto get = [&](std::string_view name) -> std::string {
    auto v = variable(name);
    return v ? *v : std::string{};
  };
  if (get("GITHUB_ACTIONS") == "true") {
    std::string server = get("GITHUB_SERVER_URL");
    std::string repo = get("GITHUB_REPOSITORY");
    std::string run = get("GITHUB_RUN_ID");
    if (!server.empty() && !repo.empty() && !run.empty()) {
      return fmt::format("{}/{}/actions/runs/{}", server, repo, run);
    }
  }
  if (std::string job = get("CI_JOB_URL"); !job.empty() && !get("GITLAB_CI").empty()) return job;
  if (std::string build = get("BUILDKITE_BUILD_URL"); !build.empty()) {
    std::string job = get("BUILDKITE_JOB_ID");
    return job.empty() ? build : build + "#" + job;
  }
  return std::nullopt;
}

std::string pack(const Identity& who) {
  std::string out = clean(who.host);
  out += kSeparator;
  out += std::to_string(who.pid);
  out += kSeparator;
  out += clean(who.user);
  out += kSeparator;
  out += clean(who.cmd);
  out += kSeparator;
  out += clean(who.note);
  return out;
}

Identity unpack(std::string_view packed) {
  auto parts = split(packed, kSeparator);
  if (parts.size() < 5) return {};
  Identity who;
  who.host = std::string(parts[0]);
  who.pid = std::strtoll(std::string(parts[1]).c_str(), nullptr, 10);
  who.user = std::string(parts[2]);
  who.cmd = std::string(parts[3]);
  who.note = std::string(parts[4]);
  return who;
}

std::string rfc3339(std::int64_t epoch_ms) {
  auto secs = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, epoch_ms % 1000);
}

std::string describe(const Identity& who) {
  if (who.host.empty() && who.user.empty() && who.pid == 0) return {};
  std::string out = fmt::format("{}@{} (pid {}", who.user, who.host, who.pid);
  if (!who.cmd.empty()) out += ", " + who.cmd;
  out += ')';
  return out;
}

std::string client_name(std::string_view what) {
  std::string out = "rcoord:";
  for (char c : what) {
    bool legal = c > ' ' && c <= '~';
    out += legal ? c : '_';
    if (out.size() >= kMaxClientName) break;
  }
  return out;
}

}  // namespace rcoord
