#include "identity.hpp"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
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

std::string effective_user() { return user_name(geteuid()); }

// A field as stored: control bytes (the separator among them) become spaces.
std::string clean(std::string_view field) {
  std::string out(field);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') c = ' ';
  }
  return out;
}

}  // namespace

std::string user_name(uid_t uid) {
  // The C library asks whatever the machine's nsswitch.conf names (files, systemd, sss,
  // ldap): the same answer `id -un` gives. A buffer too small for the entry is grown.
  std::vector<char> buf(1024);
  for (;;) {
    passwd entry{};
    passwd* found = nullptr;
    int err = getpwuid_r(uid, &entry, buf.data(), buf.size(), &found);
    if (err == ERANGE && buf.size() < (std::size_t{1} << 20)) {
      buf.resize(buf.size() * 4);
      continue;
    }
    if (err == 0 && found != nullptr && found->pw_name != nullptr && *found->pw_name != '\0') {
      return found->pw_name;
    }
    // No entry (a container's runAsUser, systemd's DynamicUser=, an unreachable directory):
    // the number is who it is.
    return fmt::format("uid {}", uid);
  }
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
  if (!who.trace_id.empty()) {
    out += kSeparator;
    out += clean(who.trace_id);
  }
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
  if (parts.size() > 5) who.trace_id = std::string(parts[5]);
  return who;
}

namespace {

// `text` is `digits` lowercase hex digits, and (when `nonzero`) not all zeros.
bool lower_hex(std::string_view text, std::size_t digits, bool nonzero) {
  if (text.size() != digits) return false;
  bool zero = true;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    zero = zero && c == '0';
  }
  return !(nonzero && zero);
}

}  // namespace

std::optional<std::string> trace_id_of(std::string_view traceparent) {
  // version-traceid-parentid-flags: 2+1+32+1+16+1+2 characters.
  constexpr std::size_t kLength = 55;
  if (traceparent.size() < kLength) return std::nullopt;
  std::string_view version = traceparent.substr(0, 2);
  std::string_view trace = traceparent.substr(3, 32);
  std::string_view parent = traceparent.substr(36, 16);
  std::string_view flags = traceparent.substr(53, 2);
  if (!lower_hex(version, 2, false) || version == "ff" || traceparent[2] != '-' ||
      traceparent[35] != '-' || traceparent[52] != '-' || !lower_hex(trace, 32, true) ||
      !lower_hex(parent, 16, true) || !lower_hex(flags, 2, false)) {
    return std::nullopt;
  }
  // Version 00 is exactly this long; a later one may carry more fields after a dash.
  bool longer_ok = version != "00" && traceparent[kLength] == '-';
  if (traceparent.size() > kLength && !longer_ok) return std::nullopt;
  return std::string(trace);
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
