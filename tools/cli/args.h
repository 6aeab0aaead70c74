#ifndef TPROBE_TOOLS_CLI_ARGS_H_
#define TPROBE_TOOLS_CLI_ARGS_H_

// What the subcommands share in reading their command lines, which each
// declares once with CommandLine (common/cli/command_line.h): parsing with
// tprobe's exit statuses and messages, and checking counts.

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/cli/command_line.h"
#include "common/status.h"

namespace tprobe::cli {

// Parses the arguments of `tprobe COMMAND` against `line`. Returns nullopt
// when the command is to run; else the exit status it ends with: kExitOk
// once --help is printed on stdout, kExitUsage once a bad command line is
// reported (UsageError).
std::optional<int> ParseCommandLine(std::string_view command, CommandLine& line,
                                    std::span<const std::string_view> args);

// Prints "tprobe COMMAND: MESSAGE" and where the help is on stderr, and
// returns kExitUsage.
int UsageError(std::string_view command, const std::string& message);

// --socket PATH and --timeout SECONDS, which every command that asks
// tprobed takes.
struct DaemonOptions {
  std::string socket;  // as given; "" for the default (CliSocketPath)
  std::chrono::milliseconds timeout;  // CliTimeout's default without it
};

// Declares --socket and --timeout on `line`, into `options`; `timeout_help`
// says what --timeout bounds.
void AddDaemonOptions(CommandLine& line, DaemonOptions& options,
                      const std::string& timeout_help);

// Parses a non-negative decimal integer no greater than `max`; the error
// says "<what> must be …".
Result<int64_t> ParseCount(std::string_view text, std::string_view what,
                           int64_t max);

}  // namespace tprobe::cli

#endif  // TPROBE_TOOLS_CLI_ARGS_H_
