#include "terminal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string_view>

#include "signals.hpp"

namespace rcoord::cmd {
namespace {

// Set by SIGWINCH, which is blocked outside Screen::wait(): no resize is missed between a
// check of the flag and the wait.
volatile std::sig_atomic_t g_resized = 0;

extern "C" void record_resize(int /*signo*/) { g_resized = 1; }

// Sequences of a full-screen view: the alternate screen, the cursor hidden, no line wrap.
constexpr std::string_view kEnter = "\033[?1049h\033[?25l\033[?7l\033[H\033[2J";
constexpr std::string_view kLeave = "\033[?7h\033[?25h\033[?1049l";

// Writes straight to the descriptor, ignoring errors: used to put the terminal back, where
// nothing could be done about a failure and nothing may throw.
void write_quietly(std::string_view bytes) {
  std::fflush(stdout);
  while (!bytes.empty()) {
    ssize_t n = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The key of a CSI sequence's final byte (`ESC [ ... X`) or SS3's (`ESC O X`), with its
// numeric parameter for the `~` forms (`ESC [ 5 ~` is Page Up).
bool csi_key(char final, int param, KeyPress& out) {
  switch (final) {
    case 'A':
      out.key = Key::kUp;
      return true;
    case 'B':
      out.key = Key::kDown;
      return true;
    case 'C':
      out.key = Key::kRight;
      return true;
    case 'D':
      out.key = Key::kLeft;
      return true;
    case 'H':
      out.key = Key::kHome;
      return true;
    case 'F':
      out.key = Key::kEnd;
      return true;
    case '~':
      switch (param) {
        case 1:
        case 7:
          out.key = Key::kHome;
          return true;
        case 4:
        case 8:
          out.key = Key::kEnd;
          return true;
        case 5:
          out.key = Key::kPageUp;
          return true;
        case 6:
          out.key = Key::kPageDown;
          return true;
        default:
          return false;
      }
    default:
      return false;
  }
}

// The length of the escape sequence at the start of `in` (in[0] == ESC), 0 when it is cut
// short; sets `key` when it is one we know.
std::size_t escape_sequence(std::string_view in, KeyPress& key, bool& known) {
  known = false;
  if (in.size() < 2) return 0;
  if (in[1] == 'O') {  // SS3: ESC O X (the keypad's application mode)
    if (in.size() < 3) return 0;
    known = csi_key(in[2], 0, key);
    return 3;
  }
  // CSI: ESC [ parameters intermediates final
  std::size_t i = 2;
  int param = 0;
  bool first_param = true;
  while (i < in.size() && in[i] >= 0x30 && in[i] <= 0x3f) {
    if (in[i] == ';') first_param = false;
    if (first_param && in[i] >= '0' && in[i] <= '9') param = param * 10 + (in[i] - '0');
    if (param > 1000) param = 1000;
    ++i;
  }
  while (i < in.size() && in[i] >= 0x20 && in[i] <= 0x2f) ++i;
  if (i >= in.size()) return 0;
  known = csi_key(in[i], param, key);
  return i + 1;
}

}  // namespace

std::vector<KeyPress> take_keys(std::string& input, bool complete) {
  std::vector<KeyPress> keys;
  std::size_t i = 0;
  while (i < input.size()) {
    char c = input[i];
    if (c == '\033') {
      std::string_view rest(input);
      rest.remove_prefix(i);
      bool sequence = rest.size() >= 2 && (rest[1] == '[' || rest[1] == 'O');
      if (rest.size() == 1 || sequence) {
        KeyPress key;
        bool known = false;
        std::size_t n = rest.size() == 1 ? 0 : escape_sequence(rest, key, known);
        if (n == 0 && !complete) break;  // the rest may still come
        if (n == 0) {
          // Nothing more came: a lone Escape (a cut sequence is dropped with it).
          keys.push_back({Key::kEscape, 0});
          i = input.size();
          break;
        }
        if (known) keys.push_back(key);
        i += n;
        continue;
      }
      keys.push_back({Key::kEscape, 0});  // ESC then another key (Alt+key): Escape first
      ++i;
      continue;
    }
    auto byte = static_cast<unsigned char>(c);
    if (c == '\r' || c == '\n') {
      keys.push_back({Key::kEnter, 0});
    } else if (byte == 0x7f || c == '\b') {
      keys.push_back({Key::kBackspace, 0});
    } else if (c == '\f') {
      keys.push_back({Key::kRedraw, 0});
    } else if (byte >= 0x20) {
      keys.push_back({Key::kChar, c});
    }
    ++i;
  }
  input.erase(0, i);
  return keys;
}

Screen::Screen(Printer& out) : out_(out) {
  signals::install();
  if (isatty(STDIN_FILENO) != 0) {
    in_ = STDIN_FILENO;
  } else {
    in_ = ::open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    own_in_ = in_ >= 0;
  }
  listening_ = in_ >= 0;
  if (in_ >= 0 && tcgetattr(in_, &saved_) == 0) {
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | IEXTEN);
    raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    raw.c_cc[VSUSP] = _POSIX_VDISABLE;
    raw.c_cc[VQUIT] = _POSIX_VDISABLE;
    raw_ = tcsetattr(in_, TCSANOW, &raw) == 0;
  }
  sigset_t winch;
  sigemptyset(&winch);
  sigaddset(&winch, SIGWINCH);
  sigprocmask(SIG_BLOCK, &winch, &saved_mask_);
  struct sigaction sa {};
  sa.sa_handler = record_resize;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGWINCH, &sa, &saved_winch_);
  g_resized = 0;
  measure();
  write_quietly(kEnter);
}

Screen::~Screen() {
  write_quietly(kLeave);
  if (raw_) tcsetattr(in_, TCSANOW, &saved_);
  if (own_in_) ::close(in_);
  sigaction(SIGWINCH, &saved_winch_, nullptr);
  sigprocmask(SIG_SETMASK, &saved_mask_, nullptr);
}

void Screen::measure() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
    rows_ = ws.ws_row;
    cols_ = ws.ws_col;
  }
}

void Screen::draw(const std::vector<std::string>& lines) {
  std::string frame;
  int row = 0;
  for (const auto& line : lines) {
    if (row >= rows_) break;
    // The line is cleared before it is written, not after: a line as wide as the window
    // leaves the cursor on its last column, and clearing from there would erase that column
    // (the "…" of a cut row).
    frame += "\033[" + std::to_string(row + 1) + ";1H\033[2K";
    frame += line;
    frame += "\033[0m";
    ++row;
  }
  if (row < rows_) frame += "\033[" + std::to_string(row + 1) + ";1H\033[J";
  out_.write_raw(frame);
}

Screen::Event Screen::wait(std::chrono::steady_clock::time_point deadline, std::string& input) {
  // The mask inside ppoll: the managed signals and SIGWINCH come through only there.
  sigset_t mask;
  const sigset_t* managed = signals::wait_mask();
  if (managed != nullptr) {
    mask = *managed;
  } else {
    sigprocmask(SIG_SETMASK, nullptr, &mask);
  }
  sigdelset(&mask, SIGWINCH);
  for (;;) {
    if (signals::pending() != 0) return Event::kSignal;
    if (g_resized != 0) {
      g_resized = 0;
      measure();
      return Event::kResize;
    }
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Event::kTimeout;
    timespec ts{static_cast<time_t>(left.count() / 1'000'000'000),
                static_cast<long>(left.count() % 1'000'000'000)};
    pollfd p{in_, POLLIN, 0};
    int n = ppoll(&p, listening_ ? 1 : 0, &ts, &mask);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Event::kTimeout;
    }
    if (n == 0) continue;
    if ((p.revents & POLLIN) != 0) {
      char buf[512];
      ssize_t got = ::read(in_, buf, sizeof(buf));
      if (got > 0) {
        input.append(buf, static_cast<std::size_t>(got));
        return Event::kInput;
      }
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    }
    // The terminal hung up (or reads fail): no more keys; the view goes on until a signal.
    listening_ = false;
  }
}

}  // namespace rcoord::cmd
