#include "tools/import/statistics_task.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include "tools/common/parallel.h"
#include "tools/import/statistic_csv.h"

namespace tprobe::import {

using dump::Json;

Result<std::vector<StepRecords>> LoadStatisticsSteps(
    const std::vector<StatisticsStepSource>& sources, size_t threads,
    tools::Reporter& reporter) {
  std::vector<const std::string*> paths;
  for (const StatisticsStepSource& source : sources) {
    for (const std::string& path : source.csv_files) paths.push_back(&path);
  }
  reporter.StartPhase("reading statistic.csv files", paths.size());
  std::vector<std::optional<Result<StatisticFile>>> files(paths.size());
  tools::ParallelFor(paths.size(), threads, [&](size_t i) {
    files[i] = ReadStatisticCsv(*paths[i]);
    reporter.Advance();
  });
  reporter.FinishPhase();
  for (const auto& file : files) {
    if (!file->ok()) return file->status();
  }

  std::vector<StepRecords> steps;
  size_t next_file = 0;
  for (const StatisticsStepSource& source : sources) {
    const size_t first_file = next_file;
    next_file += source.csv_files.size();
    std::array<bool, kStatisticCount> step_has{};
    struct Row {
      const StatisticFile* file;
      const StatisticRow* row;
    };
    std::vector<Row> rows;
    for (size_t f = first_file; f < next_file; ++f) {
      const StatisticFile& file = files[f]->value();
      for (size_t k = 0; k < kStatisticCount; ++k) {
        step_has[k] = step_has[k] || file.has_column[k];
      }
      for (const StatisticRow& row : file.rows) rows.push_back({&file, &row});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return a.row->timestamp < b.row->timestamp;
    });

    StepRecords step{source.step, source.rank, {}};
    step.records.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const StatisticRow& row = *rows[i].row;
      TensorRecord record;
      record.slot = row.slot;
      record.order = i;
      record.origin = rows[i].file->path + ":" + std::to_string(row.line);
      record.tensor = Json::object();
      record.tensor["type"] = "mindspore.Tensor";
      record.tensor["dtype"] = row.dtype;
      record.tensor["shape"] = row.shape;
      for (size_t k = 0; k < kStatisticCount; ++k) {
        if (step_has[k]) {
          record.tensor[std::string(kStatisticKeys[k])] = row.statistics[k];
        }
      }
      step.records.push_back(std::move(record));
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

Result<bool> SameStatisticsRecordData(const TensorRecord& first,
                                      const TensorRecord& again) {
  return first.tensor == again.tensor;
}

}  // namespace tprobe::import
