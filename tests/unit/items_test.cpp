// The stdin item reader: delimiters, CR/LF, a last line without newline, huge items.

#include "items.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

namespace {

// Feeds `input` through a pipe and reads it back with an ItemReader.
std::vector<std::string> read_all(const std::string& input, char delimiter) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::thread writer([&] {
    std::size_t off = 0;
    while (off < input.size()) {
      ssize_t n = ::write(fds[1], input.data() + off, input.size() - off);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
  });
  rcoord::ItemReader reader(fds[0], delimiter);
  std::vector<std::string> items;
  std::string item;
  while (reader.next(item)) items.push_back(item);
  writer.join();
  ::close(fds[0]);
  return items;
}

}  // namespace

TEST_CASE("one item per line, CR/LF folded, last line without newline kept") {
  CHECK(read_all("a\nb\r\n\nc", '\n') == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(read_all("", '\n').empty());
  CHECK(read_all("only\n", '\n') == std::vector<std::string>{"only"});
}

TEST_CASE("NUL-delimited items may hold newlines") {
  std::string input("a\nb\0c\0", 6);
  CHECK(read_all(input, '\0') == std::vector<std::string>{"a\nb", "c"});
}

TEST_CASE("items longer than the buffer and many items in a stream") {
  std::string big(200'000, 'x');
  auto items = read_all(big + "\nshort\n", '\n');
  REQUIRE(items.size() == 2);
  CHECK(items[0] == big);
  CHECK(items[1] == "short");

  std::string many;
  for (int i = 0; i < 100'000; ++i) many += std::to_string(i) + "\n";
  auto all = read_all(many, '\n');
  REQUIRE(all.size() == 100'000);
  CHECK(all[99'999] == "99999");
}

TEST_CASE("for_each_batch groups arguments into batches") {
  rcoord::ItemSource source{{"a", "b", "c", "d", "e"}, false};
  std::vector<std::size_t> sizes;
  auto n = rcoord::for_each_batch(
      source, 2, [&](const std::vector<std::string>& batch) { sizes.push_back(batch.size()); });
  CHECK(n == 5);
  CHECK(sizes == std::vector<std::size_t>{2, 2, 1});
}
