#include "top_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "text.hpp"

namespace rcoord::cmd::top {
namespace {

constexpr std::string_view kBold = "\033[1m";
constexpr std::string_view kReverse = "\033[7m";
constexpr std::string_view kPlain = "\033[0m";

// The code point starting at text[i] and its length in bytes; a byte that does not start a
// well-formed sequence is one "character" of its own (code point -1).
std::pair<long, std::size_t> next_char(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b = byte(i);
  std::size_t len = b < 0x80           ? 1
                    : (b >> 5) == 0x6  ? 2
                    : (b >> 4) == 0xe  ? 3
                    : (b >> 3) == 0x1e ? 4
                                       : 0;
  if (len == 0 || i + len > text.size()) return {-1, 1};
  long cp = len == 1 ? b : len == 2 ? (b & 0x1f) : len == 3 ? (b & 0x0f) : (b & 0x07);
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return {-1, 1};
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  return {cp, len};
}

int char_columns(long cp) {
  if (cp < 0) return 1;
  if ((cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x200b && cp <= 0x200f) ||
      (cp >= 0xfe00 && cp <= 0xfe0f)) {
    return 0;  // combining marks, zero-width spaces, variation selectors
  }
  static constexpr std::array<std::pair<long, long>, 10> kWide = {{{0x1100, 0x115f},
                                                                   {0x2e80, 0xa4cf},
                                                                   {0xac00, 0xd7a3},
                                                                   {0xf900, 0xfaff},
                                                                   {0xfe30, 0xfe4f},
                                                                   {0xff00, 0xff60},
                                                                   {0xffe0, 0xffe6},
                                                                   {0x1f300, 0x1f64f},
                                                                   {0x1f900, 0x1f9ff},
                                                                   {0x20000, 0x3fffd}}};
  for (auto [low, high] : kWide) {
    if (cp >= low && cp <= high) return 2;
  }
  return 1;
}

std::string dash_or(const std::string& text) { return text.empty() ? "-" : text; }

// The cells of one row: type, name, holder, waiting, time left, changed, state.
std::array<std::string, 7> cells(const live::Row& row, live::Clock::time_point now) {
  const auto& o = row.object;
  std::string changed = "-";
  if (row.changed) {
    changed = ago(std::chrono::duration_cast<std::chrono::milliseconds>(now - *row.changed));
  }
  return {o.type,
          escape_text(o.name),
          dash_or(escape_text(o.holder)),
          o.waiting >= 0 ? std::to_string(o.waiting) : "-",
          o.ttl_ms >= 0 ? time_left(o.ttl_ms) : "-",
          changed,
          escape_text(o.state)};
}

constexpr std::array<std::string_view, 7> kHeader = {"TYPE", "NAME",    "HOLDER", "WAIT",
                                                     "LEFT", "CHANGED", "STATE"};

// Column widths for a window `width` wide: the name as wide as the widest shown (12 to 40
// columns), the state whatever is left.
std::array<int, 7> list_widths(const ListScreen& screen, std::size_t end, int width) {
  int name = 12;
  for (std::size_t i = screen.first; i < end; ++i) {
    name = std::max(name, columns(escape_text(screen.rows[i]->object.name)));
  }
  name = std::min(name, 40);
  std::array<int, 7> w = {8, name, 14, 4, 8, 7, 0};
  int used = 0;
  for (std::size_t i = 0; i + 1 < w.size(); ++i) used += w[i] + 2;
  // A narrow window: the name gives up to 12 columns first, then the holder down to 9, so
  // that the state keeps 20 where it can.
  for (auto [column, least] : {std::pair<std::size_t, int>{1, 12}, {2, 9}}) {
    int shrink = std::max(0, std::min(w[column] - least, 20 - (width - used)));
    w[column] -= shrink;
    used -= shrink;
  }
  w[6] = std::max(0, width - used);
  return w;
}

std::string join(const std::array<std::string, 7>& cell, const std::array<int, 7>& w) {
  std::string line;
  for (std::size_t i = 0; i < cell.size(); ++i) {
    bool last = i + 1 == cell.size();
    line += fit(cell[i], w[i], !last);
    if (!last) line += "  ";
  }
  return line;
}

std::string keys_help(const std::string& filter) {
  std::string help = "q quit  / filter  j/k or arrows move  Enter details";
  if (!filter.empty()) help += "  filter: " + escape_text(filter) + " (Esc clears)";
  return help;
}

}  // namespace

int columns(std::string_view text) {
  int n = 0;
  for (std::size_t i = 0; i < text.size();) {
    auto [cp, len] = next_char(text, i);
    n += char_columns(cp);
    i += len;
  }
  return n;
}

std::string fit(std::string_view text, int width, bool pad) {
  if (width <= 0) return {};
  std::string out;
  int used = 0;
  if (columns(text) <= width) {
    out = std::string(text);
    used = columns(text);
  } else {
    // Keep what fits in width - 1 columns, then the ellipsis.
    for (std::size_t i = 0; i < text.size();) {
      auto [cp, len] = next_char(text, i);
      int w = char_columns(cp);
      if (used + w > width - 1) break;
      out.append(text.substr(i, len));
      used += w;
      i += len;
    }
    out += "…";
    ++used;
  }
  if (pad && used < width) out.append(static_cast<std::size_t>(width - used), ' ');
  return out;
}

std::string ago(std::chrono::milliseconds age) {
  long long s = std::max<long long>(0, age.count() / 1000);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m", s / 60);
  if (s < 86400) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

std::string time_left(std::int64_t ms) {
  if (ms < 1000) return fmt::format("{}ms", ms);
  if (ms < 60'000) return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000);
  std::int64_t s = ms / 1000;
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::size_t visible_rows(int height) { return static_cast<std::size_t>(std::max(1, height - 3)); }

std::size_t scroll(std::size_t first, std::size_t selected, std::size_t visible,
                   std::size_t count) {
  if (count <= visible) return 0;
  if (selected < first) first = selected;
  if (selected >= first + visible) first = selected + 1 - visible;
  return std::min(first, count - visible);
}

std::vector<std::string> render_list(const ListScreen& screen, int width, int height) {
  std::vector<std::string> lines;
  std::size_t visible = visible_rows(height);
  std::size_t end = std::min(screen.rows.size(), screen.first + visible);
  auto w = list_widths(screen, end, width);
  lines.push_back(std::string(kBold) + fit(escape_text(screen.title), width, false) +
                  std::string(kPlain));
  std::array<std::string, 7> header;
  std::copy(kHeader.begin(), kHeader.end(), header.begin());
  lines.push_back(std::string(kReverse) + fit(join(header, w), width) + std::string(kPlain));
  for (std::size_t i = screen.first; i < end; ++i) {
    std::string line =
        fit(join(cells(*screen.rows[i], screen.now), w), width, i == screen.selected);
    if (i == screen.selected) {
      line.insert(0, kReverse);
      line += kPlain;
    }
    lines.push_back(std::move(line));
  }
  if (screen.rows.empty()) {
    lines.emplace_back(screen.filter.empty() ? "(no objects)"
                                             : "(no object's name contains the filter)");
  }
  while (lines.size() + 1 < static_cast<std::size_t>(std::max(height, 2))) lines.emplace_back();
  std::string footer;
  if (screen.editing) {
    footer = "/" + escape_text(screen.filter) + "_   (Enter keeps it, Esc clears it)";
  } else if (!screen.message.empty()) {
    footer = escape_text(screen.message);
  } else {
    footer = keys_help(screen.filter);
  }
  lines.push_back(fit(footer, width, false));
  return lines;
}

std::vector<std::string> render_detail(const DetailScreen& screen, int width, int height) {
  std::vector<std::string> lines;
  lines.push_back(std::string(kBold) + fit(escape_text(screen.title), width, false) +
                  std::string(kPlain));
  lines.push_back(std::string(kReverse) + fit(screen.type + " " + escape_text(screen.name), width) +
                  std::string(kPlain));
  if (screen.row == nullptr) {
    lines.emplace_back("gone: the last pass did not find it");
  } else {
    auto c = cells(*screen.row, screen.now);
    lines.push_back(fit("state:    " + c[6], width, false));
    lines.push_back(fit("holder:   " + c[2], width, false));
    lines.push_back(fit("waiting:  " + c[3], width, false));
    lines.push_back(fit("left:     " + c[4], width, false));
    lines.push_back(fit("changed:  " + (c[5] == "-" ? c[5] : c[5] + " ago"), width, false));
  }
  auto room = static_cast<std::size_t>(std::max(height, 2) - 1);
  // The events get the bottom of the screen, at most half of it; the status what is left.
  std::vector<std::string> events;
  if (!screen.history.empty()) {
    std::size_t shown = std::min(screen.history.size(), std::max<std::size_t>(room / 2, 3) - 2);
    events.emplace_back();
    events.push_back(fit("history (latest last):", width, false));
    for (auto it = screen.history.end() - static_cast<std::ptrdiff_t>(shown);
         it != screen.history.end(); ++it) {
      events.push_back(fit("  " + *it, width, false));
    }
  }
  if (!screen.status.empty()) {
    lines.emplace_back();
    lines.push_back(fit(fmt::format("rcoord {} status:", screen.type), width, false));
    for (const auto& s : screen.status) lines.push_back(fit("  " + escape_text(s), width, false));
  }
  if (!events.empty()) {
    std::size_t keep = room > events.size() ? room - events.size() : 0;
    if (lines.size() > keep) lines.resize(keep);
    lines.insert(lines.end(), events.begin(), events.end());
  }
  if (lines.size() > room) lines.resize(room);
  while (lines.size() < room) lines.emplace_back();
  std::string footer =
      screen.message.empty() ? "Esc or Enter back  q quit" : escape_text(screen.message);
  lines.push_back(fit(footer, width, false));
  return lines;
}

std::vector<std::string> snapshot_lines(const std::vector<const live::Row*>& rows,
                                        live::Clock::time_point now) {
  std::vector<std::array<std::string, 7>> table;
  table.reserve(rows.size() + 1);
  std::array<std::string, 7> header;
  std::copy(kHeader.begin(), kHeader.end(), header.begin());
  header[3] = "WAITING";
  table.push_back(header);
  for (const auto* row : rows) table.push_back(cells(*row, now));
  std::array<int, 7> w{};
  for (const auto& line : table) {
    for (std::size_t i = 0; i < line.size(); ++i) w[i] = std::max(w[i], columns(line[i]));
  }
  std::vector<std::string> out;
  out.reserve(table.size());
  for (const auto& line : table) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      text += line[i];
      if (i + 1 == line.size()) break;
      text.append(static_cast<std::size_t>(w[i] - columns(line[i])) + 2, ' ');
    }
    out.push_back(std::move(text));
  }
  return out;
}

}  // namespace rcoord::cmd::top
