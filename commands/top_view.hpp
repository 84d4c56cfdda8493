#pragma once
/// What `rcoord top` draws: the list of objects and the detail of one, as lines of text for
/// a window of a given size, and the table of its snapshot when stdout is not a terminal.
/// Pure functions of the model (live::Board's rows), so the tests check them without a
/// terminal. Names and states are shown escaped (text.hpp), so no name drives the terminal.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "live.hpp"

namespace rcoord::cmd::top {

/// How many terminal columns `text` (UTF-8) takes: East Asian wide and emoji characters
/// two, combining marks none, anything else (a byte that is not UTF-8 too) one.
int columns(std::string_view text);

/// `text` cut to at most `width` columns (ending in "…" when cut, never inside a
/// character) and, with `pad`, filled with spaces up to `width`.
std::string fit(std::string_view text, int width, bool pad = true);

/// How long ago, in its largest unit: "4s", "12m", "3h", "2d".
std::string ago(std::chrono::milliseconds age);

/// A time left: "850ms", "12.3s", "5m10s", "2h05m".
std::string time_left(std::int64_t ms);

/// The list screen.
struct ListScreen {
  std::string title;                   ///< the first line: what is watched, when
  std::vector<const live::Row*> rows;  ///< the rows that pass the filter, in order
  std::size_t selected = 0;            ///< index into rows
  std::size_t first = 0;               ///< the first row shown (see scroll())
  std::string filter;                  ///< the name filter ("" none)
  bool editing = false;                ///< the filter is being typed
  std::string message;                 ///< shown instead of the keys' help (e.g. a master missed)
  live::Clock::time_point now;
};

/// How many rows of objects a window of `height` lines shows (title, header and footer aside).
std::size_t visible_rows(int height);

/// The first row to show so that `selected` is on a screen of `visible` rows, scrolling as
/// little as possible from `first`.
std::size_t scroll(std::size_t first, std::size_t selected, std::size_t visible, std::size_t count);

/// The lines of the list screen for a window `width` columns wide and `height` lines high:
/// the title, the column header, the rows (the selected one in reverse video) and the footer.
std::vector<std::string> render_list(const ListScreen& screen, int width, int height);

/// The detail screen of one object.
struct DetailScreen {
  std::string title;
  std::string type;
  std::string name;
  const live::Row* row = nullptr;   ///< nullptr: it was not found by the last pass
  std::vector<std::string> status;  ///< what its type's status verb prints, line by line
  /// Its latest events, as `rcoord history` prints them (oldest first). When the screen is
  /// short, the status is cut before them: what just happened matters most.
  std::vector<std::string> history{};
  std::string message;
  live::Clock::time_point now;
};

std::vector<std::string> render_detail(const DetailScreen& screen, int width, int height);

/// The snapshot printed when stdout is not a terminal: a header and one line per row, each
/// column as wide as its widest cell.
std::vector<std::string> snapshot_lines(const std::vector<const live::Row*>& rows,
                                        live::Clock::time_point now);

}  // namespace rcoord::cmd::top
