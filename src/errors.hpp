#pragma once
/// Error kinds and the exit codes of SPEC §2, in one table.

#include <stdexcept>
#include <string>

namespace rcoord {

/// Exit codes a shell script can rely on (SPEC §2).
enum Exit : int {
  kYes = 0,              ///< acquired, allowed, released, present, done
  kNo = 1,               ///< busy, denied, not the holder, absent, timed out waiting
  kUsage = 2,            ///< bad flag, duration, rate, URL, missing argument
  kConnection = 3,       ///< unreachable, I/O timeout, authentication failure, no quorum
  kServer = 4,           ///< WRONGTYPE, script error, key holds another primitive
  kLost = 5,             ///< a lock held by `run` was lost while the child ran
  kTimedOut = 124,       ///< a `run` form's command outlived --max-run (as timeout(1))
  kCannotExecute = 126,  ///< a `run` form's command exists but cannot be executed (as a shell)
  kNotFound = 127,       ///< a `run` form's command cannot be found (as a shell)
  kInterrupted = 130,    ///< SIGINT/SIGTERM while waiting, before any child ran (128+SIGINT)
};

/// The one exception type of rcoord. what() says what failed; hint() says what to do.
/// "No" answers (busy, denied, absent) are results, never errors.
class Error : public std::runtime_error {
 public:
  Error(Exit code, const std::string& what, std::string hint = {})
      : std::runtime_error(what), code_(code), hint_(std::move(hint)) {}
  Exit code() const { return code_; }
  const std::string& hint() const { return hint_; }

 private:
  Exit code_;
  std::string hint_;
};

/// The one-line message form: `rcoord: <what failed> (<what to do>)`.
std::string format_error(const Error& e);

}  // namespace rcoord
