#pragma once
/// The terminal of a full-screen view (`rcoord top`), with plain ANSI escape sequences and
/// termios: no terminal library. Every terminal emulator in use understands the few
/// sequences needed (the alternate screen, cursor position, erase, reverse video), and
/// managing termios and signals here keeps them in one place with rcoord's own signal
/// handling (SIGINT, SIGTERM and SIGHUP blocked and taken in ppoll), where a library would
/// install handlers of its own.

#include <termios.h>

#include <chrono>
#include <csignal>
#include <string>
#include <vector>

#include "output.hpp"

namespace rcoord::cmd {

/// A key the user pressed.
enum class Key {
  kChar,  ///< a printable byte (KeyPress::ch), UTF-8 bytes one at a time
  kUp,
  kDown,
  kLeft,
  kRight,
  kPageUp,
  kPageDown,
  kHome,
  kEnd,
  kEnter,
  kEscape,
  kBackspace,
  kRedraw,  ///< Ctrl-L
};

struct KeyPress {
  Key key = Key::kChar;
  char ch = 0;
  bool operator==(const KeyPress&) const = default;
};

/// Takes the key presses out of the bytes a terminal sent (`input`). An escape sequence cut
/// short at the end stays in `input`, as the rest may still come, unless `complete` (nothing
/// more came in time): then a lone ESC is the Escape key. Bytes of no known key are dropped.
std::vector<KeyPress> take_keys(std::string& input, bool complete);

/// The terminal in full-screen mode for as long as it lives: input unbuffered and not echoed
/// (Ctrl-C still raises SIGINT; Ctrl-Z and Ctrl-\ do nothing, so the terminal is never left
/// in this mode by a stop or a core dump), the alternate screen, the cursor hidden, lines not
/// wrapped. The destructor puts all of it back as it found it, however the view ends (a key,
/// a signal, an error thrown through it).
class Screen {
 public:
  /// Input comes from stdin, or from /dev/tty when stdin is not a terminal (no keys at all
  /// when neither is). `out` writes the frames to stdout.
  explicit Screen(Printer& out);
  ~Screen();
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;

  /// The size of the window, as last measured.
  int rows() const { return rows_; }
  int cols() const { return cols_; }

  /// Shows `lines` (each at most cols() wide, escape sequences aside) from the top left, the
  /// rest of the window erased, in one write.
  void draw(const std::vector<std::string>& lines);

  enum class Event { kTimeout, kInput, kResize, kSignal };
  /// Waits until `deadline` for keys (appended to `input`), a window resize (then rows() and
  /// cols() are measured again) or a managed signal (signals::pending() says which).
  Event wait(std::chrono::steady_clock::time_point deadline, std::string& input);

 private:
  void measure();

  Printer& out_;
  int in_ = -1;             ///< where keys come from; -1 none
  bool own_in_ = false;     ///< in_ was opened here (/dev/tty)
  bool listening_ = false;  ///< keys are read from in_ (false once it hung up)
  bool raw_ = false;        ///< saved_ holds the settings to restore
  termios saved_{};
  struct sigaction saved_winch_ {};
  sigset_t saved_mask_{};
  int rows_ = 24;
  int cols_ = 80;
};

}  // namespace rcoord::cmd
