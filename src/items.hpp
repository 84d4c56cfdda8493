#pragma once
/// Items for bulk verbs (`bloom add`, `pf add`, `queue push`, `complete add`): from the
/// arguments, or from stdin one per line (or NUL-delimited with -0), read in chunks so memory
/// stays flat however long the stream.

#include <cstdint>
#include <string>
#include <vector>

namespace rcoord {

class ItemReader {
 public:
  /// Reads `fd` (not owned); items end at `delimiter` ('\n' or '\0'). With '\n', a '\r'
  /// before it is dropped too (files from Windows), and a last line without one counts.
  ItemReader(int fd, char delimiter);

  /// The next item into `item`; false at the end of the input. Throws Error(kUsage) when
  /// the input cannot be read, and when one item exceeds max_item_bytes.
  bool next(std::string& item);

  std::uint64_t items_read() const { return items_; }
  static constexpr std::size_t kMaxItemBytes = 512u << 20;

 private:
  bool fill();

  int fd_;
  char delimiter_;
  std::vector<char> buffer_;
  std::size_t start_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::uint64_t items_ = 0;
};

/// Where a bulk verb's items come from: its arguments, or stdin when there are none or the
/// only one is "-".
struct ItemSource {
  std::vector<std::string> args;
  bool nul_delimited = false;  ///< -0
  bool from_stdin() const { return args.empty() || (args.size() == 1 && args[0] == "-"); }
};

/// Calls `batch(items)` with up to `batch_size` items at a time, from the arguments or stdin,
/// so callers can pipeline one batch per round trip. Returns how many items there were.
template <typename Fn>
std::uint64_t for_each_batch(const ItemSource& source, std::size_t batch_size, Fn&& batch);

/// A progress line on stderr (`1234567 items`), redrawn at most every 200 ms, only when
/// stderr is a terminal. Cleared by finish().
class Progress {
 public:
  explicit Progress(std::string what);
  void update(std::uint64_t done);
  void finish();
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  std::string what_;
  bool enabled_;
  bool drawn_ = false;
  std::int64_t last_draw_ms_ = 0;
};

// ---------------------------------------------------------------------------------------
template <typename Fn>
std::uint64_t for_each_batch(const ItemSource& source, std::size_t batch_size, Fn&& batch) {
  std::vector<std::string> items;
  if (!source.from_stdin()) {
    for (std::size_t i = 0; i < source.args.size(); i += batch_size) {
      std::size_t n = std::min(batch_size, source.args.size() - i);
      items.assign(source.args.begin() + static_cast<std::ptrdiff_t>(i),
                   source.args.begin() + static_cast<std::ptrdiff_t>(i + n));
      batch(items);
    }
    return source.args.size();
  }
  ItemReader reader(0, source.nul_delimited ? '\0' : '\n');
  Progress progress("items");
  items.resize(batch_size);
  std::size_t n = 0;
  while (reader.next(items[n])) {
    if (++n == batch_size) {
      batch(items);
      n = 0;
      progress.update(reader.items_read());
    }
  }
  if (n > 0) {
    items.resize(n);
    batch(items);
  }
  progress.finish();
  return reader.items_read();
}

}  // namespace rcoord
