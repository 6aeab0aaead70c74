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

Options:
  --task tensor      SRC holds TensorDump files:
                       SRC/step{N}/rank{R}/dump_tensor_data/*.npy
                     they are linked (or copied) into
                     DST/step{N}/rank{R}/dump_tensor_data/ under msprobe's
                     data_name, and their statistics computed
  --task statistics  SRC holds a kernel-by-kernel statistics dump:
                       SRC/rank_{R}/.../{N}/statistic.csv
  --rank R           import only rank R (the job's RANK_ID) and write it as
                     rank{R}; without it every rank is imported, and a lone
                     rank 0 is written as "rank" (one card, no RANK_ID)
  --wait N           first wait until nothing under SRC has changed for N
                     seconds (for a dump still being written)
  -h, --help         show this help

Exit status: 0 on success, 1 when the import fails, 2 for a bad command line.
)";

constexpr OptionSpec kOptions[] = {
    {"task", true},
    {"rank", true},
    {"wait", true},
};

int UsageError(const std::string& message) {
  std::fprintf(stderr,
               "tprobe import: %s\n"
               "Run 'tprobe import --help' for usage.\n",
               message.c_str());
  return kExitUsage;
}

int RunImport(std::span<const std::string_view> args) {
  Result<ParsedArgs> parsed = ParseArgs(args, kOptions);
  if (!parsed.ok()) return UsageError(parsed.status().message());
  if (parsed->Has("help")) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }

  import::ImportOptions options;
  const std::optional<std::string> task = parsed->Get("task");
  if (!task) return UsageError("--task tensor|statistics is required");
  if (*task == "tensor") {
    options.task = import::Task::kTensor;
  } else if (*task == "statistics") {
    options.task = import::Task::kStatistics;
  } else {
    return UsageError("--task must be tensor or statistics, not '" + *task +
                      "'");
  }
  if (std::optional<std::string> rank = parsed->Get("rank")) {
    Result<int64_t> r =
        ParseCount(*rank, "--rank", std::numeric_limits<int>::max());
    if (!r.ok()) return UsageError(r.status().message());
    options.rank = static_cast<int>(*r);
  }
  if (std::optional<std::string> wait = parsed->Get("wait")) {
    Result<int64_t> seconds = ParseCount(*wait, "--wait", 24 * 3600);
    if (!seconds.ok()) return UsageError(seconds.status().message());
    options.wait = std::chrono::seconds(*seconds);
  }
  const std::vector<std::string>& paths = parsed->positionals;
  if (paths.empty()) return UsageError("SRC is missing");
  if (paths.size() > 2) {
    return UsageError("too many arguments: '" + paths[2] + "'");
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
