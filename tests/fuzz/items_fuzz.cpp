// The stdin item reader: bytes written to a pipe in fuzzer-chosen pieces (so reads end at
// any point of an item) come back as exactly the items a plain split gives, in both the
// newline and the NUL mode. The input may be repeated to cross the reader's buffer size.

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "fuzz_support.hpp"
#include "items.hpp"

namespace {

// What the reader must return: items split at `delim`, a last one without a delimiter
// kept, and with '\n' a '\r' before the end of an item dropped.
std::vector<std::string> split(const std::string& input, char delim) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < input.size()) {
    std::size_t stop = input.find(delim, start);
    if (stop == std::string::npos) stop = input.size();
    std::string item = input.substr(start, stop - start);
    if (delim == '\n' && !item.empty() && item.back() == '\r') item.pop_back();
    out.push_back(item);
    start = stop + 1;
  }
  return out;
}

void write_in_pieces(int fd, const std::string& input, std::size_t piece) {
  for (std::size_t at = 0; at < input.size();) {
    ssize_t n = ::write(fd, input.data() + at, std::min(piece, input.size() - at));
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rcoord;
  if (size < 2) return 0;
  // Byte 0: the mode and how often the rest repeats (up to 128 times, so past the reader's
  // first 64 KiB buffer for inputs of 512 bytes or more). Byte 1: the write size, at least
  // 1/1024 of the whole so that a run stays quick.
  char delim = (data[0] & 1) != 0 ? '\0' : '\n';
  std::size_t repeats = 1 + (data[0] >> 1);
  std::string unit(reinterpret_cast<const char*>(data + 2), size - 2);
  std::string input;
  for (std::size_t i = 0; i < repeats; ++i) input += unit;
  std::size_t piece =
      std::max<std::size_t>(1 + static_cast<std::size_t>(data[1]) * 257, input.size() / 1024);

  static const bool sigpipe_ignored = std::signal(SIGPIPE, SIG_IGN) != SIG_ERR;
  (void)sigpipe_ignored;
  int fds[2];
  if (::pipe(fds) != 0) return 0;
  std::thread writer(write_in_pieces, fds[1], std::cref(input), piece);
  std::vector<std::string> items;
  fuzz::expect_errors({kUsage}, [&] {
    ItemReader reader(fds[0], delim);
    std::string item;
    while (reader.next(item)) items.push_back(item);
    fuzz::require(reader.items_read() == items.size(), "items_read counts the items");
  });
  ::close(fds[0]);  // a writer still blocked gets EPIPE (SIGPIPE is ignored) and ends
  writer.join();
  fuzz::require(items == split(input, delim), "the reader returns exactly the split input");
  return 0;
}
