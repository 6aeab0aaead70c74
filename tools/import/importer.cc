#include "tools/import/importer.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "common/config/dump_dir.h"
#include "common/dump/json_writer.h"
#include "common/dump/tree_writer.h"
#include "tools/common/parallel.h"
#include "tools/import/call_order.h"
#include "tools/import/construct.h"
#include "tools/import/duplicates.h"
#include "tools/import/quiet_wait.h"
#include "tools/import/source_layout.h"
#include "tools/import/statistics_task.h"
#include "tools/import/tensor_files.h"
#include "tools/import/tensor_task.h"
#include "tools/import/tree_builder.h"

namespace tprobe::import {
namespace {

constexpr const char* kTensorDir = "dump_tensor_data";

// A step of a rank, ordered and numbered, ready to be written.
struct PlannedStep {
  std::string dir;  // DST/step{N}/rank{R}
  std::vector<TensorRecord> records;
  std::vector<CellCall> calls;
  size_t duplicates = 0;
};

// The records of every source step, in source order, and how many
// data_name-form files were left alone.
struct Loaded {
  std::vector<StepRecords> steps;
  size_t already_imported = 0;
};

Result<Loaded> Load(const ImportOptions& options, tools::Reporter& reporter) {
  Loaded loaded;
  if (options.task == Task::kTensor) {
    Result<std::vector<TensorStepSource>> sources =
        FindTensorSteps(options.source, options.rank);
    if (!sources.ok()) return sources.status();
    for (const TensorStepSource& source : *sources) {
      loaded.already_imported += source.already_imported;
    }
    Result<std::vector<StepRecords>> steps =
        LoadTensorSteps(*sources, options.threads, reporter);
    if (!steps.ok()) return steps.status();
    loaded.steps = std::move(steps).value();
  } else {
    Result<std::vector<StatisticsStepSource>> sources =
        FindStatisticsSteps(options.source, options.rank);
    if (!sources.ok()) return sources.status();
    Result<std::vector<StepRecords>> steps =
        LoadStatisticsSteps(*sources, options.threads, reporter);
    if (!steps.ok()) return steps.status();
    loaded.steps = std::move(steps).value();
  }
  return loaded;
}

Status WriteStep(const PlannedStep& step, Task task) {
  StepDocumentsSpec spec;
  spec.task = task == Task::kTensor ? "tensor" : "statistics";
  if (task == Task::kTensor) {
    const std::string data_dir = JoinPath(step.dir, kTensorDir);
    spec.dump_data_dir = data_dir;
    spec.with_data_name = true;
    if (Status s = dump::MakeDirs(data_dir); !s.ok()) return s;
    // The tensor files go first, so dump.json never names a missing file.
    for (const TensorRecord& record : step.records) {
      Status s = PlaceTensorFile(
          record.source_file,
          JoinPath(data_dir, DataName(record.slot, record.call)));
      if (!s.ok()) return s;
    }
  }
  StepDocuments docs = BuildStepDocuments(spec, step.records, step.calls);
  docs.tree.accounting().duplicates_dropped = step.duplicates;
  return dump::WriteStepTree(step.dir, docs.tree);
}

Status FirstError(const std::vector<Status>& statuses) {
  for (const Status& s : statuses) {
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Result<ImportSummary> Import(const ImportOptions& options,
                             tools::Reporter& reporter) {
  std::error_code ec;
  if (!std::filesystem::exists(options.source, ec)) {
    return Status::Error(options.source + ": no such directory");
  }
  if (!std::filesystem::is_directory(options.source, ec)) {
    return Status::Error(options.source + ": not a directory");
  }
  if (options.wait.count() > 0) {
    Status s = WaitUntilQuiet(options.source, options.wait, reporter);
    if (!s.ok()) return s;
  }

  Result<Loaded> loaded = Load(options, reporter);
  if (!loaded.ok()) return loaded.status();
  std::vector<StepRecords>& steps = loaded->steps;

  std::vector<int> ranks;
  for (const StepRecords& step : steps) ranks.push_back(step.rank);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  const std::string& destination =
      options.destination.empty() ? options.source : options.destination;

  // Order, deduplicate and number every step before writing any.
  const LogFn log = [&reporter](const std::string& line) {
    reporter.Log(line);
  };
  const SameDataFn same_data = options.task == Task::kTensor
                                   ? SameDataFn(SameTensorRecordData)
                                   : SameDataFn(SameStatisticsRecordData);
  std::vector<PlannedStep> planned(steps.size());
  std::vector<Status> errors(steps.size());
  tools::ParallelFor(steps.size(), options.threads, [&](size_t i) {
    StepRecords& step = steps[i];
    PlannedStep& plan = planned[i];
    plan.dir = JoinPath(
        JoinPath(destination, "step" + std::to_string(step.step)),
        config::RankDirName(OutputRank(step.rank, ranks, options.rank)));
    SortByExecution(step.records);
    Result<size_t> dropped = DropDuplicates(step.records, same_data, log);
    if (!dropped.ok()) {
      errors[i] = dropped.status();
      return;
    }
    plan.duplicates = *dropped;
    AssignCallIndices(step.records);
    plan.calls = BuildCellCalls(step.records);
    plan.records = std::move(step.records);
  });
  if (Status s = FirstError(errors); !s.ok()) return s;

  reporter.StartPhase("writing step directories", planned.size());
  tools::ParallelFor(planned.size(), options.threads, [&](size_t i) {
    errors[i] = WriteStep(planned[i], options.task);
    reporter.Advance();
  });
  reporter.FinishPhase();
  if (Status s = FirstError(errors); !s.ok()) return s;

  ImportSummary summary;
  summary.already_imported = loaded->already_imported;
  for (const PlannedStep& plan : planned) {
    summary.directories.push_back(plan.dir);
    summary.tensors += plan.records.size();
    summary.duplicates_dropped += plan.duplicates;
  }
  return summary;
}

}  // namespace tprobe::import
