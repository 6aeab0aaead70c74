#ifndef TPROBE_TOOLS_COMPARE_ROW_COMPARE_H_
#define TPROBE_TOOLS_COMPARE_ROW_COMPARE_H_

// The verdict on one pair of rows: which metrics apply (the pair's mode, or
// statistics where a tensor file cannot be read), their values, and the
// Result and Err_message columns.
//
//   tensor      both tensor files (.npy, or msprobe's PyTorch .pt) mapped,
//               metrics.h's tensor metrics; a row without a readable file
//               (a tensor written without data, a .pt that pt_file.h
//               refuses) falls back to its statistics, and Err_message
//               says so
//   statistics  metrics.h's statistics rule
//   md5, xor    the checksums are equal or "Different"
// Any mode: a shape or dtype mismatch (other than among float16, bfloat16,
// float32 and float64), or a tensor against a value, is an error; a value row
// passes when the values are equal; a row on one side only is missing (in
// the baseline only) or extra (in the target only).
//
// Thread safety: CompareRow may be called concurrently.

#include <optional>
#include <string>

#include "tools/compare/input/dump_rows.h"
#include "tools/compare/matcher.h"
#include "tools/compare/metrics.h"

namespace tprobe::compare {

enum class Verdict { kPass, kWarning, kError, kMissing, kExtra };
inline constexpr int kVerdictCount = 5;

const char* VerdictName(Verdict verdict);  // "pass", "warning", ...

struct RowResult {
  RowPair pair;
  Mode mode = Mode::kStatistics;  // how the row was compared
  Verdict verdict = Verdict::kPass;
  std::string result;  // the CSV's Result: pass, Warning, error, Different,
                       // missing, extra
  std::optional<TensorMetricValues> tensor;
  std::optional<StatisticsMetricValues> statistics;
  std::string message;  // Err_message
  // What Err_message adds to the verdict's messages: how the row was
  // compared where that is not its mode (a tensor by its statistics).
  std::string note;
  // How far apart, for the plot: MaxRelativeErr in tensor mode, the
  // statistics' largest relative difference otherwise; 0 for equal rows,
  // NaN where nothing was measured.
  double score = 0;
};

// Compares `pair` of `target` and `baseline` (either may be null for a
// missing or extra row) in `mode`. These are tprobe's own verdicts (the
// --strict-verdicts rules); msprobe_verdicts.h then judges each call's rows
// together as msprobe does.
RowResult CompareRow(const RowPair& pair, const Dump* target,
                     const Dump* baseline, Mode mode);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_ROW_COMPARE_H_
