#include "tools/import/tensor_task.h"

#include <string>
#include <utility>

#include "tools/common/parallel.h"
#include "tools/import/tensor_files.h"
#include "tools/import/tensor_name.h"

namespace tprobe::import {

Result<std::vector<StepRecords>> LoadTensorSteps(
    const std::vector<TensorStepSource>& sources, size_t threads,
    tools::Reporter& reporter) {
  // Names first: a bad name fails the import before any file is read.
  std::vector<StepRecords> steps;
  std::vector<std::pair<size_t, size_t>> files;  // (step, record)
  std::vector<std::string> dtypes;
  for (const TensorStepSource& source : sources) {
    StepRecords step{source.step, source.rank, {}};
    for (const std::string& name : source.files) {
      const std::string path = JoinPath(source.data_dir, name);
      Result<TensorFileName> parsed = ParseTensorFileName(name);
      if (!parsed.ok()) {
        return Status::Error(path + ": " + parsed.status().message());
      }
      TensorRecord record;
      record.slot = std::move(parsed->slot);
      record.order = parsed->id;
      record.origin = path;
      record.source_file = path;
      files.emplace_back(steps.size(), step.records.size());
      dtypes.push_back(std::move(parsed->dtype));
      step.records.push_back(std::move(record));
    }
    steps.push_back(std::move(step));
  }

  reporter.StartPhase("reading tensor files", files.size());
  std::vector<Status> errors(files.size());
  tools::ParallelFor(files.size(), threads, [&](size_t i) {
    TensorRecord& record = steps[files[i].first].records[files[i].second];
    Result<TensorFileSummary> summary =
        SummarizeTensorFile(record.source_file, dtypes[i]);
    if (summary.ok()) {
      record.tensor = std::move(summary->tensor);
      record.data_crc = summary->data_crc;
    } else {
      errors[i] = summary.status();
    }
    reporter.Advance();
  });
  reporter.FinishPhase();
  for (const Status& error : errors) {
    if (!error.ok()) return error;
  }
  return steps;
}

Result<bool> SameTensorRecordData(const TensorRecord& first,
                                  const TensorRecord& again) {
  if (first.data_crc != again.data_crc ||
      first.tensor.value("dtype", "") != again.tensor.value("dtype", "")) {
    return false;
  }
  return SameTensorData(first.source_file, again.source_file);
}

}  // namespace tprobe::import
