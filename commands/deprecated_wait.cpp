#include "deprecated_wait.hpp"

#include <fmt/format.h>

#include "errors.hpp"

namespace rcoord::cmd {

namespace {

/// add_deprecated_wait for a Millis or an optional one.
template <typename Target>
CLI::Option* add_old_wait(CLI::App* verb, const std::string& old_flag, CLI::Option* wait,
                          Target& target, Context& ctx) {
  // `signal wait`; a command without a group (`history`) is its name alone.
  const CLI::App* group = verb->get_parent();
  std::string verb_path = group != nullptr && group->get_parent() != nullptr
                              ? group->get_name() + " " + verb->get_name()
                              : verb->get_name();
  std::string new_flag = wait->get_name();
  return verb
      ->add_option_function<std::string>(
          old_flag,
          [&target, &ctx, wait, old_flag, new_flag, verb_path](const std::string& text) {
            // Option callbacks run once the whole command line is parsed: --wait, given
            // before or after, is counted by now.
            if (wait->count() > 0) {
              throw Error(kUsage, fmt::format("{} and {} given together", old_flag, new_flag),
                          fmt::format("give {} only", new_flag));
            }
            target = *parse_wait(text);
            std::string line =
                fmt::format("rcoord: warning: {} after '{}' is deprecated: write {} {}", old_flag,
                            verb_path, new_flag, text);
            if (old_flag == "--timeout") line += " (--timeout is the I/O timeout everywhere else)";
            ctx.deprecated(std::move(line));
          },
          "")
      ->group("")
      ->type_name("DURATION|forever")
      ->check(kWaitCheck);
}

}  // namespace

CLI::Option* add_deprecated_wait(CLI::App* verb, const std::string& old_flag, CLI::Option* wait,
                                 Millis& target, Context& ctx) {
  return add_old_wait(verb, old_flag, wait, target, ctx);
}

CLI::Option* add_deprecated_wait(CLI::App* verb, const std::string& old_flag, CLI::Option* wait,
                                 std::optional<Millis>& target, Context& ctx) {
  return add_old_wait(verb, old_flag, wait, target, ctx);
}

}  // namespace rcoord::cmd
