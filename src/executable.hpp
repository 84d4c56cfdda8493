#pragma once
/// Whether a command can be run, found the way execvp(3) will look for it: checked before a
/// `run` verb or `queue consume` takes anything, so a typo in the command never leaves a
/// lock held (`--min-hold`) or a queue's messages failing one after another.

#include <string>

namespace rcoord {

/// 0 when `command` (an argv[0]) names an executable file: as given when it holds a '/',
/// otherwise in one of $PATH's directories. Otherwise the errno execvp would end with:
/// ENOENT (not found anywhere) or EACCES (found, but a directory or not executable).
int executable_errno(const std::string& command);

/// The file execvp(3) would run for `command`: `command` itself when it holds a '/', else the
/// first of $PATH's candidates that is an executable file; "" when there is none. Searched
/// once per command and kept, so that a `run` form, which checks its command before it takes
/// anything, starts it after the take without searching again: each directory tried there
/// is an execve that fails, at about 10 µs each, between the take and the command.
const std::string& executable_path(const std::string& command);

/// Throws Error(kNotFound) (127) or Error(kCannotExecute) (126), as a shell would exit,
/// when executable_errno says `command` cannot be run. The message says nothing was taken.
void check_executable(const std::string& command);

}  // namespace rcoord
