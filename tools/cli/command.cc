#include "tools/cli/command.h"

#include <algorithm>

namespace tprobe::cli {
namespace {

// Function-local, so it exists before any registration runs.
std::vector<const Command*>& Registry() {
  static std::vector<const Command*> commands;
  return commands;
}

}  // namespace

CommandRegistration::CommandRegistration(const Command& command) {
  Registry().push_back(&command);
}

std::vector<const Command*> Commands() {
  std::vector<const Command*> commands = Registry();
  std::sort(
      commands.begin(), commands.end(),
      [](const Command* a, const Command* b) { return a->name < b->name; });
  return commands;
}

const Command* FindCommand(std::string_view name) {
  for (const Command* command : Registry()) {
    if (command->name == name) return command;
  }
  return nullptr;
}

}  // namespace tprobe::cli
