#include "help_command.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "errors.hpp"

namespace rcoord::cmd {
namespace {

struct HelpArgs {
  std::string group;
};

// `man -w PAGE` finds the page without showing it. Asked first, so that a page that is not
// installed (or a system without man) is one line saying what to use instead, not man's own
// words after a pager has started.
bool man_finds(const std::string& page) {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    execlp("man", "man", "-w", page.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int run_help(Context&, const HelpArgs& a) { return open_manual(a.group); }

}  // namespace

int open_manual(const std::string& group) {
  std::string page = group.empty() ? "rcoord" : "rcoord-" + group;
  std::string instead = group.empty() ? "rcoord --help" : "rcoord " + group + " --help";
  if (man_finds(page)) {
    execlp("man", "man", page.c_str(), static_cast<char*>(nullptr));
  }
  throw Error(kUsage, fmt::format("the man page {}(1) is not installed here, or man is not", page),
              fmt::format("use '{}'", instead));
}

void add_help(CLI::App& app, Context& ctx, std::vector<std::string> groups) {
  auto* help = app.add_subcommand("help", "Show the manual of a command group (man rcoord-GROUP)");
  auto args = std::make_shared<HelpArgs>();
  help->add_option("group", args->group, "A command group (rcoord(1) when none)")
      ->check(CLI::IsMember(std::move(groups)));
  help->footer("Example: rcoord help lock");
  on_parse(help, ctx, args, run_help);
}

}  // namespace rcoord::cmd
