// `tprobe import`: the command-line face of tools/import.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <string>

#include "tools/cli/args.h"
#include "tools/cli/command.h"
#include "tools/common/reporter.h"
#include "tools/import/importer.h"

namespace tprobe::cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: tprobe import --task tensor|statistics [--rank R] [--wait N] SRC [DST]

Turns a MindSpore graph-mode raw dump (msprobe's cell dump) into msprobe's
dump tree DST/step{N}/rank{R}/ with dump.json, stack.json and construct.json.
Files under SRC are only read. DST defaults to SRC.
)";

constexpr char kFooter[] =
    "Exit status: 0 on success, 1 when the import fails, 2 for a bad command "
    "line.\n";

// The options, into `options` (`task_given`: whether --task was).
void Declare(CommandLine& line, import::ImportOptions& options,
             bool& task_given) {
  line.AddValue(
      "--task", "TASK",
      "tensor: SRC holds TensorDump files:\n"
      "  SRC/step{N}/rank{R}/dump_tensor_data/*.npy\n"
      "they are linked (or copied) into\n"
      "DST/step{N}/rank{R}/dump_tensor_data/ under msprobe's\n"
      "data_name, and their statistics computed.\n"
      "statistics: SRC holds a kernel-by-kernel statistics\n"
      "dump: SRC/rank_{R}/.../{N}/statistic.csv",
      [&options = options, &task_given = task_given](const std::string& task) {
        task_given = true;
        if (task == "tensor") {
          options.task = import::Task::kTensor;
        } else if (task == "statistics") {
          options.task = import::Task::kStatistics;
        } else {
          return Status::Error("--task must be tensor or statistics, not '" +
                               task + "'");
        }
        return Status::Ok();
      });
  line.AddValue("--rank", "R",
                "import only rank R (the job's RANK_ID) and write it as\n"
                "rank{R}; without it every rank is imported, and a lone\n"
                "rank 0 is written as \"rank\" (one card, no RANK_ID)",
                [&options = options](const std::string& rank) {
                  Result<int64_t> r = ParseCount(
                      rank, "--rank", std::numeric_limits<int>::max());
                  if (!r.ok()) return r.status();
                  options.rank = static_cast<int>(*r);
                  return Status::Ok();
                });
  line.AddValue("--wait", "N",
                "first wait until nothing under SRC has changed for N\n"
                "seconds (for a dump still being written)",
                [&options = options](const std::string& wait) {
                  Result<int64_t> seconds =
                      ParseCount(wait, "--wait", 24 * 3600);
                  if (!seconds.ok()) return seconds.status();
                  options.wait = std::chrono::seconds(*seconds);
                  return Status::Ok();
                });
}

int RunImport(std::span<const std::string_view> args) {
  import::ImportOptions options;
  bool task_given = false;
  CommandLine line(kUsage, kFooter);
  Declare(line, options, task_given);
  if (auto exit = ParseCommandLine("import", line, args)) return *exit;
  if (!task_given) {
    return UsageError("import", "--task tensor|statistics is required");
  }
  const std::vector<std::string>& paths = line.operands();
  if (paths.empty()) return UsageError("import", "SRC is missing");
  if (paths.size() > 2) {
    return UsageError("import", "too many arguments: '" + paths[2] + "'");
  }
  options.source = paths[0];
  options.destination = paths.size() == 2 ? paths[1] : paths[0];

  tools::Reporter reporter(stderr, ::isatty(STDERR_FILENO) == 1,
                           "tprobe import: ");
  const auto start = std::chrono::steady_clock::now();
  Result<import::ImportSummary> summary = import::Import(options, reporter);
  if (!summary.ok()) {
    std::fprintf(stderr, "tprobe import: %s\n",
                 summary.status().message().c_str());
    return kExitFailure;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "tprobe import: wrote %zu step director%s with %zu tensors to %s "
      "(%zu duplicate%s dropped) in %.2f s\n",
      summary->directories.size(),
      summary->directories.size() == 1 ? "y" : "ies", summary->tensors,
      options.destination.c_str(), summary->duplicates_dropped,
      summary->duplicates_dropped == 1 ? "" : "s", seconds);
  if (summary->already_imported > 0) {
    std::printf(
        "tprobe import: left alone %zu source file%s already named in "
        "msprobe's form\n",
        summary->already_imported, summary->already_imported == 1 ? "" : "s");
  }
  return kExitOk;
}

const Command kImportCommand{
    "import",
    "turn MindSpore graph-mode raw dumps into an msprobe dump tree",
    RunImport,
};
const CommandRegistration kRegistration(kImportCommand);

}  // namespace
}  // namespace tprobe::cli
