// `tprobe recover DIR`: turns the journals a killed tprobed left into valid
// step files (common/dump/journal.h).

#include <cstdio>
#include <filesystem>
#include <string>

#include "common/dump/journal.h"
#include "tools/cli/args.h"
#include "tools/cli/command.h"

namespace tprobe::cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: tprobe recover DIR

tprobed writes a step's files once, when the step closes; until then it
appends what it captured to step<N>/rank<R>/tprobe.journal. When tprobed was
killed in the middle of a step, the journal is all there is: this command
rebuilds dump.json, stack.json, construct.json and tprobe.json of every such
step under DIR (a dump_path), marks them recovered (so "complete": false),
and removes the journals. A restarted tprobed does the same for a rank when
that rank registers again.

What survives: everything tprobed had applied to the step up to a few
milliseconds before it died, and the tensor files it had written. What does
not: records that were still in the shared-memory rings.
)";

constexpr char kFooter[] =
    R"(Exit status: 0 when every journal was recovered (or there was none), 1 when
one could not be, 2 for a bad command line.
)";

int RunRecover(std::span<const std::string_view> args) {
  CommandLine line(kUsage, kFooter);
  if (auto exit = ParseCommandLine("recover", line, args)) return *exit;
  if (line.operands().size() != 1) {
    return UsageError("recover", "expected one DIR (a dump_path)");
  }
  const std::string& root = line.operands()[0];
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    std::fprintf(stderr, "tprobe recover: %s is not a directory\n",
                 root.c_str());
    return kExitFailure;
  }
  auto recovered = dump::RecoverTree(root);
  if (!recovered.ok()) {
    std::fprintf(stderr, "tprobe recover: %s\n",
                 recovered.status().message().c_str());
    return kExitFailure;
  }
  for (const std::string& dir : *recovered) {
    std::printf("recovered %s (marked incomplete)\n", dir.c_str());
  }
  std::printf("%zu step%s recovered under %s\n", recovered->size(),
              recovered->size() == 1 ? "" : "s", root.c_str());
  return kExitOk;
}

const Command kRecoverCommand{
    "recover",
    "rebuild the steps a killed tprobed left as journals",
    RunRecover,
};
const CommandRegistration kRegistration(kRecoverCommand);

}  // namespace
}  // namespace tprobe::cli
