// tprobe: the command-line tool. Dispatches to the subcommand named by the
// first argument (tools/cli/command.h); each subcommand parses the rest.

#include <cstdio>
#include <string_view>
#include <vector>

#include "tools/cli/command.h"

namespace {

void PrintUsage(std::FILE* out) {
  std::fputs("Usage: tprobe COMMAND [ARGS...]\n\nCommands:\n", out);
  for (const tprobe::cli::Command* command : tprobe::cli::Commands()) {
    std::fprintf(out, "  %-12.*s %.*s\n",
                 static_cast<int>(command->name.size()), command->name.data(),
                 static_cast<int>(command->summary.size()),
                 command->summary.data());
  }
  std::fputs("\nRun 'tprobe COMMAND --help' for a command's options.\n", out);
}

}  // namespace

int main(int argc, char** argv) {
  using tprobe::cli::kExitOk;
  using tprobe::cli::kExitUsage;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintUsage(stderr);
    return kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintUsage(stdout);
    return kExitOk;
  }
  const tprobe::cli::Command* command = tprobe::cli::FindCommand(args[0]);
  if (command == nullptr) {
    std::fprintf(stderr, "tprobe: unknown command '%.*s'\n\n",
                 static_cast<int>(args[0].size()), args[0].data());
    PrintUsage(stderr);
    return kExitUsage;
  }
  return command->run(std::span(args).subspan(1));
}
