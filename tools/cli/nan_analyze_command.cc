// `tprobe nan-analyze DIR`: the first call of a step, across its ranks,
// that made an inf or NaN (tools/compare/nan_analysis.h).

#include <cstdio>
#include <string>

#include "tools/cli/args.h"
#include "tools/cli/command.h"
#include "tools/compare/nan_analysis.h"

namespace tprobe::cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: tprobe nan-analyze DIR [--threads N]

Finds where an inf or NaN first appeared in one step of a dump: DIR is a
step{N} folder (all its ranks), a rank folder or a dump.json. On each rank
the calls are walked in dump order to the first one with a non-finite value
(by the statistics in dump.json); the origin is the call whose inputs were
finite and whose output was not. Communication calls (Distributed.*) are
followed across ranks: a rank that got its first NaN out of an all_reduce
received it, and the origin is on the rank where it first appeared. Prints
the call, its rank and its module path (construct.json).
)";

constexpr char kFooter[] =
    R"(Exit status: 0 when no rank holds an inf or NaN, 4 when one does, 2 for a
bad command line or a DIR that holds no dump.
)";

int RunNanAnalyze(std::span<const std::string_view> args) {
  CommandLine line(kUsage, kFooter);
  size_t threads = 0;
  line.AddValue("--threads", "N", "worker threads (default: one per core)",
                [&threads](const std::string& value) {
                  Result<int64_t> n = ParseCount(value, "--threads", 1024);
                  if (!n.ok()) return n.status();
                  threads = static_cast<size_t>(*n);
                  return Status::Ok();
                });
  if (auto exit = ParseCommandLine("nan-analyze", line, args)) return *exit;
  if (line.operands().size() != 1) {
    return UsageError("nan-analyze", "expected one DIR");
  }
  Result<compare::NanReport> report =
      compare::AnalyzeNan(line.operands()[0], threads);
  if (!report.ok()) {
    std::fprintf(stderr, "tprobe nan-analyze: %s\n",
                 report.status().message().c_str());
    return ExitStatusOf(report.status());
  }
  std::fputs(compare::DescribeNanReport(*report).c_str(), stdout);
  return report->findings.empty() ? kExitOk : kExitFound;
}

const Command kNanAnalyzeCommand{
    "nan-analyze",
    "find the call and rank where an inf or NaN first appeared",
    RunNanAnalyze,
};
const CommandRegistration kRegistration(kNanAnalyzeCommand);

}  // namespace
}  // namespace tprobe::cli
