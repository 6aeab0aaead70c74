// `tprobe compare TARGET BASELINE`: compares two dump trees row by row, as
// msprobe's compare does, and names the first call that diverged. The
// engine is tools/compare (comparison.h); this file parses the command
// line and writes the reports.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/cli/args.h"
#include "tools/cli/command.h"
#include "tools/compare/comparison.h"
#include "tools/compare/report/csv_report.h"
#include "tools/compare/report/html_report.h"
#include "tools/compare/report/terminal_summary.h"

namespace tprobe::cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: tprobe compare TARGET BASELINE [-o DIR] [--fuzzy] [--mapping FILE]
                      [--cell-mapping FILE | --api-mapping [FILE] |
                       --data-mapping FILE | --layer-mapping FILE]
                      [--strict-verdicts] [--threads N]

Compares the dump tree TARGET (the run under suspicion) with BASELINE (the
trusted run) and names the first call that diverged. TARGET and BASELINE
are both dump.json files (or rank folders), both step{N} folders (ranks
paired by number) or both dump roots (steps and ranks paired). Trees of
tprobe and of msprobe (8.3.3 and 26.x, proc{pid} folders included) are read.

Each dump.json entry is flattened into rows named as msprobe's compare
names them ({entry}.input.0, {entry}.output.0, {entry}.parameters.weight,
...). A row matches the baseline row of the same name and shape, backward
calls renumbered on both sides as msprobe's compare does: the n-th backward
call of an API in dump order matches the other tree's n-th (the report keeps
the dumped names). A row only the baseline has is reported as missing, one
only the target has as extra: neither ever passes.

The verdicts are msprobe 26.2's: each call's rows are judged together, by
its per-API checks. A row passes unless a check makes it a warning or an
error:
  statistics  error: the target's Max or Min is NaN or inf and the
              baseline's are not; every input's NormRelativeErr is under 10 %
              and an output's over 50 %; Requires_grad, a scalar argument or
              the dtype differs. warning: the outputs' largest
              NormRelativeErr is over 10 times the inputs' (over 10 % when
              the inputs' is 0).
  tensor      the files under dump_tensor_data/ (.npy, and msprobe's
              PyTorch .pt, read without unpickling), memory-mapped: Cosine,
              EucDist, MaxAbsErr, MaxRelativeErr, One Thousandth and Five
              Thousandths Err Ratio. error: the same NaN/inf, Requires_grad,
              scalar and dtype checks; every input's One Thousandth Err
              Ratio is over 0.9 and an output's under 0.1. warning: every
              input's Cosine is over 0.9 and an output's is 0.1 lower. A
              file that cannot be read: the row is compared by statistics.
  md5, xor    error: the checksums differ.
Calls msprobe does not judge (Tensor.to, empty, ...) pass. Two trees of
different tasks are compared by their statistics. Cells are written as
msprobe writes them (Python's repr of floats, N/A, relative errors in %).

Options:
  -o, --output DIR  where the reports go (default: ./compare_result, made
                    when missing): compare_result*.csv (one per rank and
                    step, msprobe's columns) and report.html
  --fuzzy           ignore call indices: the n-th call of an API matches the
                    n-th (shapes must still be equal)
  --mapping FILE    YAML or JSON map "target name: baseline name" (an entry
                    name maps all its rows; a backward call by its
                    renumbered name)
  --cell-mapping FILE, --api-mapping [FILE], --data-mapping FILE,
  --layer-mapping FILE
                    msprobe 26.2's -cm, -am, -dm, -lm for a MindSpore TARGET
                    against a PyTorch BASELINE (one of them, as msprobe
                    applies one). --cell-mapping: only rows of forward and
                    backward calls and parameters_grad rows pair, the first
                    "Cell" becomes "Module", and FILE ("fc1.Dense:
                    fc1.Linear", msprobe's cell_mapping.yaml) maps the cell
                    path: a whole path, else each key found in it, in file
                    order. --api-mapping: Mint.x is Torch.x, MintFunctional.x
                    Functional.x, and msprobe's built-in table maps about
                    400 other APIs (Functional.add is Torch.add); FILE
                    (msprobe's api_mapping.yaml, given as
                    --api-mapping=FILE or as the next word when it ends in
                    .yaml or .yml) is a list of "- ms_api: Mint.sub",
                    "pt_api: Torch.sub", "ms_args: [0, 1]", "pt_args:
                    [1, 0]" (and ms_output/pt_output, ms_parameters/
                    pt_parameters, ms_parameters_grad/pt_parameters_grad)
                    items: for an API both dumps call, a row at a listed
                    place pairs with the PyTorch API's row at the paired
                    place, the API's other rows with nothing. --data-mapping:
                    FILE maps whole row names ("Cell.fc.Dense.forward.0.
                    input.0: Module.fc.Linear.forward.0.input.0"), paired
                    exactly (not --fuzzy) whatever their dtypes. Across
                    frameworks, dtypes of one family pair (Float32 and
                    torch.float32, Int64 and torch.int64, ...).
                    --layer-mapping: each dump pair gets a data mapping
                    made from both trees' layers (construct.json; with
                    8.x's keyed stack.json also the framework function
                    that called an API): an entry pairs with the baseline
                    entry at the same layer path, state and place, the
                    path rewritten by FILE
                    (msprobe's layer_mapping.yaml: "ClassName:" then
                    indented "child path: new name" lines; "Cell" is the
                    top layer). A TARGET without stack.json and
                    construct.json is compared plainly
  --strict-verdicts also apply tprobe's own per-row rules where they are
                    worse: a warning when any statistic differs by more
                    than half the larger value, an error for NaN or inf on
                    the baseline's side only, and in tensor mode an error
                    when (Cosine < 0.99 and MaxAbsErr > 0.001) or Cosine <
                    0.9 or MaxAbsErr > 1 (msprobe 8.3.3's "Accuracy Reached
                    or Not"). For a call whose output moved with its inputs
                    (msprobe's checks pass it): two steps of one training,
                    a change planted in a weight
  --threads N       worker threads (default: one per core)
  -h, --help        show this help

Exit status: 0 when every row passes, 4 when a row did not (warning, error,
missing or extra), 2 for a bad command line or input that is not a dump, 1
when a report cannot be written.
)";

int UsageError(const std::string& message) {
  std::fprintf(stderr,
               "tprobe compare: %s\nRun 'tprobe compare --help' for usage.\n",
               message.c_str());
  return kExitUsage;
}

int RunCompare(std::span<const std::string_view> args) {
  // --api-mapping's FILE is optional (msprobe's `-am [FILE]`): written
  // after '=', or as the next word when that is a .yaml or .yml file (a
  // TARGET is a folder or a dump.json).
  static constexpr auto kYamlFile = [](std::string_view word) {
    return word.ends_with(".yaml") || word.ends_with(".yml");
  };
  static constexpr OptionSpec kSpecs[] = {{"output", true},
                                          {"fuzzy", false},
                                          {"mapping", true},
                                          {"cell-mapping", true},
                                          {"api-mapping", false, +kYamlFile},
                                          {"data-mapping", true},
                                          {"layer-mapping", true},
                                          {"strict-verdicts", false},
                                          {"threads", true}};
  // -o is --output.
  std::vector<std::string_view> expanded;
  for (std::string_view a : args)
    expanded.push_back(a == "-o" ? "--output" : a);
  Result<ParsedArgs> parsed = ParseArgs(expanded, kSpecs);
  if (!parsed.ok()) return UsageError(parsed.status().message());
  if (parsed->Has("help")) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (parsed->positionals.size() != 2) {
    return UsageError("expected TARGET and BASELINE");
  }
  compare::CompareOptions options;
  options.fuzzy = parsed->Has("fuzzy");
  options.strict_verdicts = parsed->Has("strict-verdicts");
  if (auto threads = parsed->Get("threads")) {
    Result<int64_t> n = ParseCount(*threads, "--threads", 1024);
    if (!n.ok()) return UsageError(n.status().message());
    options.threads = static_cast<size_t>(*n);
  }
  if (auto mapping = parsed->Get("mapping")) {
    Result<compare::NameMapping> map = compare::NameMapping::Load(*mapping);
    if (!map.ok()) return UsageError(map.status().message());
    options.mapping = std::move(*map);
  }
  const int msprobe_mappings =
      parsed->Has("cell-mapping") + parsed->Has("api-mapping") +
      parsed->Has("data-mapping") + parsed->Has("layer-mapping");
  if (msprobe_mappings > 1) {
    return UsageError(
        "--cell-mapping, --api-mapping, --data-mapping and --layer-mapping "
        "exclude each other");
  }
  if (auto file = parsed->Get("layer-mapping")) {
    Result<compare::LayerMapping> map = compare::LayerMapping::Load(*file);
    if (!map.ok()) return UsageError(map.status().message());
    options.layer_mapping = std::move(*map);
  }
  using Kind = compare::MsprobeMapping::Kind;
  if (auto file = parsed->Get("api-mapping")) {
    options.msprobe_mapping = compare::MsprobeMapping::Api();
    if (!file->empty()) {
      Result<std::vector<compare::ApiArgMapping>> items =
          compare::LoadApiArgMappings(*file);
      if (!items.ok()) return UsageError(items.status().message());
      options.msprobe_mapping = compare::MsprobeMapping::Api(std::move(*items));
    }
  }
  for (const auto& [flag, kind] : {std::pair{"cell-mapping", Kind::kCell},
                                   std::pair{"data-mapping", Kind::kData}}) {
    if (auto file = parsed->Get(flag)) {
      Result<compare::MsprobeMapping> map =
          compare::MsprobeMapping::Load(kind, *file);
      if (!map.ok()) return UsageError(map.status().message());
      options.msprobe_mapping = std::move(*map);
    }
  }
  const std::string out = parsed->Get("output").value_or("compare_result");
  const std::string& target = parsed->positionals[0];
  const std::string& baseline = parsed->positionals[1];

  tools::Reporter reporter(stderr, ::isatty(STDERR_FILENO) == 1,
                           "tprobe compare: ");
  Result<compare::CompareResult> result =
      compare::RunCompare(target, baseline, options, reporter);
  if (!result.ok()) {
    std::fprintf(stderr, "tprobe compare: %s\n",
                 result.status().message().c_str());
    return ExitStatusOf(result.status());
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) {
    std::fprintf(stderr, "tprobe compare: cannot make %s: %s\n", out.c_str(),
                 ec.message().c_str());
    return kExitFailure;
  }
  for (const compare::PairResult& pair : result->pairs) {
    Status written = compare::WriteCsv(pair, out);
    if (!written.ok()) {
      std::fprintf(stderr, "tprobe compare: %s\n", written.message().c_str());
      return kExitFailure;
    }
  }
  Status html = compare::WriteHtmlReport(*result, target, baseline, out);
  if (!html.ok()) {
    std::fprintf(stderr, "tprobe compare: %s\n", html.message().c_str());
    return kExitFailure;
  }
  std::fputs(compare::TerminalSummary(*result, out).c_str(), stdout);
  return result->passed() ? kExitOk : kExitFound;
}

const Command kCompareCommand{
    "compare",
    "compare two dump trees; name the first call that diverged",
    RunCompare,
};
const CommandRegistration kRegistration(kCompareCommand);

}  // namespace
}  // namespace tprobe::cli
