#ifndef TPROBE_TOOLS_COMPARE_MSPROBE_MSPROBE_CELLS_H_
#define TPROBE_TOOLS_COMPARE_MSPROBE_MSPROBE_CELLS_H_

// The statistics cells of msprobe 26.x's compare_result CSV, and the
// numbers its indicator checks read back from them (the rules of its
// CalcStatsDiff and str2float; no code of it).
//
// A statistic of one side ("NPU max", ...) is the dump.json value as
// written: an integer as "989", a float as Python's repr, a bool as
// "True"/"False", a missing one as "None", a value row's text as is, and
// "N/A" where the other side has no matching row.
//
// Its difference with the baseline's ("Max diff" and "MaxRelativeErr"):
//   - equal texts: "0" and "0";
//   - either "N/A": "N/A";
//   - two finite numbers: repr(N - B) and repr(|(N - B) / B * 100|) + "%",
//     or "inf" for the relative error when B is 0 (also -0.0 against 0.0);
//   - a NaN against a number or an infinity: "Nan";
//   - an infinity against a number (or the other infinity): "inf" or
//     "-inf", the sign of N - B;
//   - "None", a bool or a text against anything but "N/A": "Diff".
//
// Thread safety: pure functions.

#include <array>
#include <optional>
#include <string>

#include "tools/compare/input/dump_rows.h"

namespace tprobe::compare {

struct StatDiffCells {
  std::string diff;      // "Max diff"
  std::string relative;  // "MaxRelativeErr"
  // What msprobe's checks read from `relative`: the fraction of a "12.5%"
  // cell (nullopt for any other text), and str2float's number (the
  // fraction, +-inf for "inf"/"-inf", NaN for "Nan", 0 otherwise).
  std::optional<double> percent;
  double as_float = 0;
};

// "NPU max" ... "NPU l2norm" of `row` (i = 0..3); "N/A" for a null row.
std::string StatCellText(const Row* row, int i);

// The four differences of `target` against `baseline` (Max, Min, Mean,
// Norm); "N/A" everywhere when either is null.
std::array<StatDiffCells, 4> StatDiffs(const Row* target, const Row* baseline);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_MSPROBE_MSPROBE_CELLS_H_
