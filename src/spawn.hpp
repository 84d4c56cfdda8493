#pragma once
/// Starting a `run` form's command: its process (a process group of its own, the terminal's
/// foreground when rcoord has it, a death signal tied to rcoord), and the terminal handed to
/// it and back as a shell does with a job.

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rcoord {

/// What to start: argv (no shell), variables added to rcoord's environment, and the standard
/// input (dup2'ed onto fd 0 when >= 0; otherwise rcoord's is inherited).
struct CommandSpec {
  const std::vector<std::string>& argv;
  const std::vector<std::pair<std::string, std::string>>& env;
  int stdin_fd = -1;
};

/// Makes `group` the terminal's foreground group (SIGTTOU blocked meanwhile). Safe in the
/// command's process before its exec (no allocation).
void hand_terminal_to(pid_t group);

/// Whether rcoord runs in the terminal's foreground: then its command gets the terminal, so
/// that Ctrl-C, Ctrl-Z and reads of the terminal reach the command the user sees.
bool terminal_is_ours();

/// The terminal's foreground group handed to the command's group (by the command's process
/// itself before its exec, and here again, so neither side races the other), taken back when
/// the command's group stops (job control) or is gone, and handed to it again when rcoord is
/// continued in the foreground.
class TerminalHandover {
 public:
  /// `ours`: terminal_is_ours() before the command's process started (which takes it).
  TerminalHandover(pid_t child_group, bool ours) : child_group_(child_group) {
    if (!ours) return;
    own_group_ = getpgrp();
    hand_terminal_to(child_group_);
  }
  ~TerminalHandover() { take_back(); }
  TerminalHandover(const TerminalHandover&) = delete;
  TerminalHandover& operator=(const TerminalHandover&) = delete;

  bool handed() const { return own_group_ > 0; }
  void take_back() const {
    if (handed()) hand_terminal_to(own_group_);
  }
  /// After rcoord was continued: the command's group gets the terminal again if rcoord is in
  /// the foreground (`fg`), not if it was continued in the background (`bg`).
  void hand_again() const {
    if (handed() && tcgetpgrp(STDIN_FILENO) == own_group_) hand_terminal_to(child_group_);
  }

 private:
  pid_t child_group_;
  pid_t own_group_ = -1;
};

/// What supervising needs of the process, done once, before the guard exists (see spawn.cpp).
/// A run form that waits does it before it waits (start_guard).
void prepare_supervision();

/// Starts `command` as fork and exec would, without copying rcoord's page tables
/// (see spawn.cpp). The child names its group in `guard_group` before it execs, and takes the
/// terminal first when `take_terminal`. After prepare_supervision(). Returns the pid, or -1
/// with errno.
pid_t spawn_command(const CommandSpec& command, std::atomic<std::int32_t>* guard_group,
                    bool take_terminal);

}  // namespace rcoord
