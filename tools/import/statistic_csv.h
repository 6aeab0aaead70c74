#ifndef TPROBE_TOOLS_IMPORT_STATISTIC_CSV_H_
#define TPROBE_TOOLS_IMPORT_STATISTIC_CSV_H_

// statistic.csv as MindSpore's kernel-by-kernel statistics dump writes it
// for msprobe's cell dump (task "statistics"). Each row is one input of a
// TensorDump kernel; the columns used are
//
//   Op Name    "…dump_tensor_data_Cell-model-Net-forward-input-0|…": the
//              cell tensor's name with '-' for '.', after the marker
//              "dump_tensor_data_" ("dump_tensor_data/" in newer
//              MindSpore), up to an optional '|'
//   Data Type  numpy-style dtype name ("float32")
//   Shape      "(1,4096)"
//   Timestamp  the execution order
//   Slot       the kernel input; slot 0 is TensorDump's file-name argument
//              and is dropped
//   Max Value, Min Value, Avg Value, L2Norm Value
//              optional (the statistics chosen in the dump's summary_mode)

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/dump/json_writer.h"
#include "common/status.h"
#include "tools/import/tensor_name.h"

namespace tprobe::import {

// The statistic columns, in dump.json's key order: Max, Min, Mean, Norm.
inline constexpr size_t kStatisticCount = 4;
inline constexpr std::array<std::string_view, kStatisticCount>
    kStatisticColumns = {"Max Value", "Min Value", "Avg Value", "L2Norm Value"};
inline constexpr std::array<std::string_view, kStatisticCount> kStatisticKeys =
    {"Max", "Min", "Mean", "Norm"};

// One kept row (Slot not 0) of a statistic.csv.
struct StatisticRow {
  size_t line = 0;
  TensorSlot slot;
  long double timestamp = 0;  // exact for any 64-bit integer
  std::string dtype;          // dump.json's dtype: "Float32", or "None"
  std::vector<int64_t> shape;
  // The converted statistic columns; null where the file lacks the column.
  std::array<dump::Json, kStatisticCount> statistics;
};

struct StatisticFile {
  std::string path;
  std::array<bool, kStatisticCount> has_column{};
  std::vector<StatisticRow> rows;  // in file order
};

// Reads one statistic.csv. Returns an error naming the file (and the line,
// where there is one) when it cannot be read or parsed, when it lacks any of
// the columns Op Name, Data Type, Shape, Timestamp and Slot (all missing
// ones are named), when a row has more fields than the header, when a
// Timestamp is not a number, or when a kept row's Op Name has no cell
// tensor name after the marker.
Result<StatisticFile> ReadStatisticCsv(const std::string& path);

// The cell tensor name in an Op Name: "Cell.model.Net.forward.input.0" for
// "Default/TensorDump-op1|dump_tensor_data_Cell-model-Net-forward-input-0|x".
// nullopt when the marker is missing.
std::optional<std::string> CellTensorNameOfOp(std::string_view op_name);

// Converts one statistic cell as msprobe reads it through pandas: an empty
// cell or a pandas missing-value word ("null", "nan", "NaN", "NA", "N/A",
// "None", …) is null, "true"/"false" in any case are booleans, a number is
// a float (NaN as null), and anything else stays a string.
dump::Json ConvertStatisticValue(std::string_view text);

// The integers in a Shape cell: "(1,4096)" -> [1, 4096], "()" -> [].
std::vector<int64_t> ParseShape(std::string_view text);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_STATISTIC_CSV_H_
