#include "items.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "errors.hpp"

namespace rcoord {

ItemReader::ItemReader(int fd, char delimiter) : fd_(fd), delimiter_(delimiter), buffer_(1 << 16) {}

bool ItemReader::fill() {
  if (eof_) return false;
  // Keep the unfinished item, make room after it (the buffer grows only for huge items).
  if (start_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + start_, end_ - start_);
    end_ -= start_;
    start_ = 0;
  }
  if (end_ == buffer_.size()) {
    if (buffer_.size() >= kMaxItemBytes) {
      throw Error(kUsage, fmt::format("an input item is longer than {} MiB", kMaxItemBytes >> 20),
                  "split the input into smaller items");
    }
    buffer_.resize(buffer_.size() * 2);
  }
  for (;;) {
    ssize_t n = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (n > 0) {
      end_ += static_cast<std::size_t>(n);
      return true;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    if (errno != EINTR) {
      throw Error(kUsage, fmt::format("cannot read the input: {}", std::strerror(errno)),
                  "check what is piped into rcoord");
    }
  }
}

bool ItemReader::next(std::string& item) {
  std::size_t scanned = start_;
  for (;;) {
    const char* begin = buffer_.data() + scanned;
    const void* hit = std::memchr(begin, delimiter_, end_ - scanned);
    if (hit != nullptr) {
      auto stop = static_cast<std::size_t>(static_cast<const char*>(hit) - buffer_.data());
      std::size_t len = stop - start_;
      if (delimiter_ == '\n' && len > 0 && buffer_[stop - 1] == '\r') --len;
      item.assign(buffer_.data() + start_, len);
      start_ = stop + 1;
      ++items_;
      return true;
    }
    std::size_t consumed = end_ - start_;
    if (!fill()) {
      if (end_ == start_) return false;
      // The last item had no delimiter.
      std::size_t len = end_ - start_;
      if (delimiter_ == '\n' && buffer_[end_ - 1] == '\r') --len;
      item.assign(buffer_.data() + start_, len);
      start_ = end_;
      ++items_;
      return true;
    }
    scanned = start_ + consumed;
  }
}

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Progress::Progress(std::string what)
    : what_(std::move(what)), enabled_(isatty(STDERR_FILENO) != 0) {}

void Progress::update(std::uint64_t done) {
  if (!enabled_) return;
  std::int64_t now = now_ms();
  if (drawn_ && now - last_draw_ms_ < 200) return;
  last_draw_ms_ = now;
  drawn_ = true;
  std::string line = fmt::format("\r{} {}", done, what_);
  ::write(STDERR_FILENO, line.data(), line.size());
}

void Progress::finish() {
  if (!drawn_) return;
  drawn_ = false;
  static constexpr char kClear[] = "\r\033[K";
  ::write(STDERR_FILENO, kClear, sizeof(kClear) - 1);
}

}  // namespace rcoord
