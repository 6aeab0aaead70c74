// `tprobe compare TARGET BASELINE`: compares two dump trees row by row, as
// msprobe's compare does, and names the first call that diverged. The
// engine is tools/compare (comparison.h); this file parses the command
// line and writes the reports.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
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
)";

constexpr char kFooter[] =
    R"(Exit status: 0 when every row passes, 4 when a row did not (warning, error,
missing or extra), 2 for a bad command line or input that is not a dump, 1
when a report cannot be written.
)";

// msprobe's `-am [FILE]`: --api-mapping's FILE is optional, written after
// '=' or as the next word when that is a .yaml or .yml file (a TARGET is a
// folder or a dump.json). CLI11 would take any next word that is no
// option, so a bare --api-mapping is moved to the end of the options,
// where no word follows it.
std::vector<std::string_view> ApiMappingLast(
    std::span<const std::string_view> args) {
  std::vector<std::string_view> words(args.begin(), args.end());
  auto end = std::find(words.begin(), words.end(), "--");
  for (auto it = words.begin(); it != end; ++it) {
    const bool file_follows =
        it + 1 != end && (it[1].ends_with(".yaml") || it[1].ends_with(".yml"));
    if (*it == "--api-mapping" && !file_follows) {
      std::rotate(it, it + 1, end);
      break;
    }
  }
  return words;
}

// The command line's options, as given.
struct Flags {
  std::optional<std::string> output, threads, mapping, cell_mapping,
      api_mapping, data_mapping, layer_mapping;
  bool fuzzy = false, strict_verdicts = false;
};

// --mapping and msprobe's four mapping options.
void DeclareMappingOptions(CommandLine& line, Flags& flags) {
  line.AddValue("--mapping", "FILE",
                "YAML or JSON map \"target name: baseline name\" (an entry\n"
                "name maps all its rows; a backward call by its\n"
                "renumbered name)",
                &flags.mapping);
  line.AddValue("--cell-mapping", "FILE",
                "msprobe 26.2's -cm, for a MindSpore TARGET against a\n"
                "PyTorch BASELINE, as the next three (one of the four, as\n"
                "msprobe applies one): only rows of forward and\n"
                "backward calls and parameters_grad rows pair, the first\n"
                "\"Cell\" becomes \"Module\", and FILE (\"fc1.Dense:\n"
                "fc1.Linear\", msprobe's cell_mapping.yaml) maps the cell\n"
                "path: a whole path, else each key found in it, in file\n"
                "order.",
                &flags.cell_mapping);
  line.AddValue("--api-mapping", "[FILE]",
                "msprobe's -am: Mint.x is Torch.x, MintFunctional.x\n"
                "Functional.x, and msprobe's built-in table maps about\n"
                "400 other APIs (Functional.add is Torch.add); FILE\n"
                "(msprobe's api_mapping.yaml, given as\n"
                "--api-mapping=FILE or as the next word when it ends in\n"
                ".yaml or .yml) is a list of \"- ms_api: Mint.sub\",\n"
                "\"pt_api: Torch.sub\", \"ms_args: [0, 1]\", \"pt_args:\n"
                "[1, 0]\" (and ms_output/pt_output, ms_parameters/\n"
                "pt_parameters, ms_parameters_grad/pt_parameters_grad)\n"
                "items: for an API both dumps call, a row at a listed\n"
                "place pairs with the PyTorch API's row at the paired\n"
                "place, the API's other rows with nothing.",
                &flags.api_mapping)
      ->expected(0, 1);
  line.AddValue("--data-mapping", "FILE",
                "msprobe's -dm: FILE maps whole row names\n"
                "(\"Cell.fc.Dense.forward.0.input.0:\n"
                "Module.fc.Linear.forward.0.input.0\"), paired exactly\n"
                "(not --fuzzy) whatever their dtypes. Across\n"
                "frameworks, dtypes of one family pair (Float32 and\n"
                "torch.float32, Int64 and torch.int64, ...).",
                &flags.data_mapping);
  line.AddValue("--layer-mapping", "FILE",
                "msprobe's -lm: each dump pair gets a data mapping\n"
                "made from both trees' layers (construct.json; with\n"
                "8.x's keyed stack.json also the framework function\n"
                "that called an API): an entry pairs with the baseline\n"
                "entry at the same layer path, state and place, the\n"
                "path rewritten by FILE (msprobe's layer_mapping.yaml:\n"
                "\"ClassName:\" then indented \"child path: new name\"\n"
                "lines; \"Cell\" is the top layer). A TARGET without\n"
                "stack.json and construct.json is compared plainly",
                &flags.layer_mapping);
}

// The options, in the order --help lists them.
void DeclareOptions(CommandLine& line, Flags& flags) {
  line.AddValue("-o,--output", "DIR",
                "where the reports go (default: ./compare_result, made\n"
                "when missing): compare_result*.csv (one per rank and\n"
                "step, msprobe's columns) and report.html",
                &flags.output);
  line.AddFlag("--fuzzy",
               "ignore call indices: the n-th call of an API matches the\n"
               "n-th (shapes must still be equal)",
               &flags.fuzzy);
  DeclareMappingOptions(line, flags);
  line.AddFlag("--strict-verdicts",
               "also apply tprobe's own per-row rules where they are\n"
               "worse: a warning when any statistic differs by more\n"
               "than half the larger value, an error for NaN or inf on\n"
               "the baseline's side only, and in tensor mode an error\n"
               "when (Cosine < 0.99 and MaxAbsErr > 0.001) or Cosine <\n"
               "0.9 or MaxAbsErr > 1 (msprobe 8.3.3's \"Accuracy Reached\n"
               "or Not\"). For a call whose output moved with its inputs\n"
               "(msprobe's checks pass it): two steps of one training,\n"
               "a change planted in a weight",
               &flags.strict_verdicts);
  line.AddValue("--threads", "N", "worker threads (default: one per core)",
                &flags.threads);
}

// The mapping files of `flags`, read into `options`; an error is a usage
// error's message.
Status LoadMappings(const Flags& flags, compare::CompareOptions& options) {
  if (flags.mapping) {
    Result<compare::NameMapping> map =
        compare::NameMapping::Load(*flags.mapping);
    if (!map.ok()) return map.status();
    options.mapping = std::move(*map);
  }
  const int msprobe_mappings =
      flags.cell_mapping.has_value() + flags.api_mapping.has_value() +
      flags.data_mapping.has_value() + flags.layer_mapping.has_value();
  if (msprobe_mappings > 1) {
    return Status::InvalidArgument(
        "--cell-mapping, --api-mapping, --data-mapping and --layer-mapping "
        "exclude each other");
  }
  if (const auto& file = flags.layer_mapping) {
    Result<compare::LayerMapping> map = compare::LayerMapping::Load(*file);
    if (!map.ok()) return map.status();
    options.layer_mapping = std::move(*map);
  }
  using Kind = compare::MsprobeMapping::Kind;
  if (const auto& file = flags.api_mapping) {
    options.msprobe_mapping = compare::MsprobeMapping::Api();
    if (!file->empty()) {
      Result<std::vector<compare::ApiArgMapping>> items =
          compare::LoadApiArgMappings(*file);
      if (!items.ok()) return items.status();
      options.msprobe_mapping = compare::MsprobeMapping::Api(std::move(*items));
    }
  }
  for (const auto& [file, kind] :
       {std::pair{&flags.cell_mapping, Kind::kCell},
        std::pair{&flags.data_mapping, Kind::kData}}) {
    if (*file) {
      Result<compare::MsprobeMapping> map =
          compare::MsprobeMapping::Load(kind, **file);
      if (!map.ok()) return map.status();
      options.msprobe_mapping = std::move(*map);
    }
  }
  return Status::Ok();
}

// Writes the CSV files and report.html under `out`, and the summary to
// stdout; returns the exit status.
int WriteReports(const compare::CompareResult& result,
                 const std::string& target, const std::string& baseline,
                 const std::string& out) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) {
    std::fprintf(stderr, "tprobe compare: cannot make %s: %s\n", out.c_str(),
                 ec.message().c_str());
    return kExitFailure;
  }
  for (const compare::PairResult& pair : result.pairs) {
    Status written = compare::WriteCsv(pair, out);
    if (!written.ok()) {
      std::fprintf(stderr, "tprobe compare: %s\n", written.message().c_str());
      return kExitFailure;
    }
  }
  Status html = compare::WriteHtmlReport(result, target, baseline, out);
  if (!html.ok()) {
    std::fprintf(stderr, "tprobe compare: %s\n", html.message().c_str());
    return kExitFailure;
  }
  std::fputs(compare::TerminalSummary(result, out).c_str(), stdout);
  return result.passed() ? kExitOk : kExitFound;
}

// `tprobe compare`: parses the command line, compares the two trees and
// writes the reports.
int CompareAndReport(std::span<const std::string_view> args) {
  CommandLine line(kUsage, kFooter);
  Flags flags;
  DeclareOptions(line, flags);
  if (auto exit = ParseCommandLine("compare", line, ApiMappingLast(args))) {
    return *exit;
  }
  auto usage_error = [](const std::string& message) {
    return UsageError("compare", message);
  };
  if (line.operands().size() != 2) {
    return usage_error("expected TARGET and BASELINE");
  }
  compare::CompareOptions options;
  options.fuzzy = flags.fuzzy;
  options.strict_verdicts = flags.strict_verdicts;
  if (flags.threads) {
    Result<int64_t> n = ParseCount(*flags.threads, "--threads", 1024);
    if (!n.ok()) return usage_error(n.status().message());
    options.threads = static_cast<size_t>(*n);
  }
  if (Status loaded = LoadMappings(flags, options); !loaded.ok()) {
    return usage_error(loaded.message());
  }
  const std::string& target = line.operands()[0];
  const std::string& baseline = line.operands()[1];
  tools::Reporter reporter(stderr, ::isatty(STDERR_FILENO) == 1,
                           "tprobe compare: ");
  Result<compare::CompareResult> result =
      compare::CompareTrees(target, baseline, options, reporter);
  if (!result.ok()) {
    std::fprintf(stderr, "tprobe compare: %s\n",
                 result.status().message().c_str());
    return ExitStatusOf(result.status());
  }
  return WriteReports(*result, target, baseline,
                      flags.output.value_or("compare_result"));
}

const Command kCompareCommand{
    "compare",
    "compare two dump trees; name the first call that diverged",
    CompareAndReport,
};
const CommandRegistration kRegistration(kCompareCommand);

}  // namespace
}  // namespace tprobe::cli
