// The subcommands' shared command-line handling (args.h).

#include "tools/cli/args.h"

#include <charconv>
#include <cstdio>

#include "tools/cli/command.h"
#include "tools/cli/control_client.h"

namespace tprobe::cli {

std::optional<int> ParseCommandLine(std::string_view command, CommandLine& line,
                                    std::span<const std::string_view> args) {
  Result<bool> help = line.Parse(args);
  if (!help.ok()) return UsageError(command, help.status().message());
  if (*help) {
    std::fputs(line.Help().c_str(), stdout);
    return kExitOk;
  }
  return std::nullopt;
}

int UsageError(std::string_view command, const std::string& message) {
  std::fprintf(stderr, "tprobe %.*s: %s\nRun 'tprobe %.*s --help' for usage.\n",
               static_cast<int>(command.size()), command.data(),
               message.c_str(), static_cast<int>(command.size()),
               command.data());
  return kExitUsage;
}

void AddDaemonOptions(CommandLine& line, DaemonOptions& options,
                      const std::string& timeout_help) {
  options.timeout = kDefaultTimeout;
  line.AddValue("--socket", "PATH",
                "tprobed's control socket (default: $TPROBE_SOCKET, else\n"
                "$XDG_RUNTIME_DIR/tprobe/tprobed.sock, else\n"
                "/tmp/tprobe-<uid>/tprobed.sock)",
                [&options](const std::string& path) {
                  options.socket = path;
                  return Status::Ok();
                });
  line.AddValue("--timeout", "SECONDS", timeout_help,
                [&options](const std::string& seconds) {
                  auto timeout = CliTimeout(seconds);
                  if (!timeout.ok()) return timeout.status();
                  options.timeout = *timeout;
                  return Status::Ok();
                });
}

Result<int64_t> ParseCount(std::string_view text, std::string_view what,
                           int64_t max) {
  int64_t v = -1;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() ||
      v < 0 || v > max) {
    return Status::Error(
        std::string(what) + " must be a whole number from 0 to " +
        std::to_string(max) + ", not '" + std::string(text) + "'");
  }
  return v;
}

}  // namespace tprobe::cli
