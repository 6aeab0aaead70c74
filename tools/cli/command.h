#ifndef TPROBE_TOOLS_CLI_COMMAND_H_
#define TPROBE_TOOLS_CLI_COMMAND_H_

// The subcommands of the `tprobe` tool. Each lives in its own file, which
// defines a Command and registers it with a namespace-scope
// CommandRegistration; adding a subcommand is adding that file (and its
// line in tools/cli/CMakeLists.txt). main.cc dispatches by name.

#include <span>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tprobe::cli {

// Exit statuses of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the command ran and failed
inline constexpr int kExitUsage = 2;    // bad command line
inline constexpr int kExitNothing = 3;  // nothing to do (no rank registered)
// compare and nan-analyze: the command ran and found a difference (a row
// that did not pass) or an inf/NaN.
inline constexpr int kExitFound = 4;

// The exit status for a command that ended with `status`: a bad value is a
// usage error, a request that changed nothing is kExitNothing.
inline int ExitStatusOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
      return kExitUsage;
    case StatusCode::kNothingToDo:
      return kExitNothing;
    default:
      return kExitFailure;
  }
}

struct Command {
  std::string_view name;     // "import"
  std::string_view summary;  // one line for `tprobe --help`
  // Runs the command with the arguments after its name and returns the
  // exit status. Handles its own --help.
  int (*run)(std::span<const std::string_view> args);
};

// Registers `command` for the lifetime of the program. `command` must
// outlive it (define both at namespace scope).
class CommandRegistration {
 public:
  explicit CommandRegistration(const Command& command);
};

// The registered commands, sorted by name.
std::vector<const Command*> Commands();

// The command called `name`, or null.
const Command* FindCommand(std::string_view name);

}  // namespace tprobe::cli

#endif  // TPROBE_TOOLS_CLI_COMMAND_H_
