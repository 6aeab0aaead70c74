// One row's verdict (row_compare.h).

#include "tools/compare/row_compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "tools/compare/input/python_repr.h"
#include "tools/compare/input/tensor_file.h"
#include "tools/compare/msprobe/msprobe_dtypes.h"

namespace tprobe::compare {
namespace {

// The score of a row where nothing was measured (row_compare.h).
constexpr double kUnmeasured = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kChunk = 1 << 14;  // elements converted at a time

void SetError(RowResult& r, const std::string& message) {
  r.verdict = Verdict::kError;
  r.result = "error";
  r.message += message;
  r.score = std::numeric_limits<double>::infinity();
}

void ByStatistics(RowResult& r, const Row& t, const Row& b) {
  r.statistics = CompareStatistics(t.stats, b.stats);
  r.score = r.statistics->score;
  if (r.statistics->nonfinite_mismatch) {
    SetError(r, "NaN or Inf on one side only. ");
  } else if (r.statistics->warning) {
    r.verdict = Verdict::kWarning;
    r.result = "Warning";
    r.message += "Need double check api accuracy. ";
  } else {
    r.result = "pass";
  }
}

// Tensor mode: both files mapped, or a fallback to the statistics.
void ByTensors(RowResult& r, const Row& t, const Row& b, const Dump& td,
               const Dump& bd) {
  auto fallback = [&](const std::string& why) {
    r.note = why + " Compared by the statistics in dump.json.";
    r.message += r.note + " ";
    ByStatistics(r, t, b);
  };
  if (t.data_name.empty() || b.data_name.empty()) {
    return fallback("No tensor file.");
  }
  Result<MappedTensor> n =
      MappedTensor::Open(td.TensorDir() + "/" + t.data_name);
  if (!n.ok()) return fallback(n.status().message() + ".");
  Result<MappedTensor> m =
      MappedTensor::Open(bd.TensorDir() + "/" + b.data_name);
  if (!m.ok()) return fallback(m.status().message() + ".");
  if (n->size() != m->size()) {
    return SetError(r, "The tensor files hold " + std::to_string(n->size()) +
                           " and " + std::to_string(m->size()) + " elements. ");
  }
  TensorMetrics metrics;
  std::vector<double> x(std::min(kChunk, n->size()));
  std::vector<double> y(x.size());
  for (size_t at = 0; at < n->size(); at += kChunk) {
    const size_t len = std::min(kChunk, n->size() - at);
    n->ToDouble(at, std::span(x).first(len));
    m->ToDouble(at, std::span(y).first(len));
    metrics.Add(std::span(x).first(len), std::span(y).first(len));
  }
  r.tensor = metrics.Finish();
  r.message += r.tensor->message;
  r.score = r.tensor->max_relative;
  if (n->size() == 0 || r.tensor->accurate) {
    r.result = "pass";
    if (n->size() == 0) r.score = 0;
  } else {
    r.verdict = Verdict::kError;
    r.result = "error";
    if (std::isnan(r.score)) r.score = std::numeric_limits<double>::infinity();
  }
  // Statistics too, for the Max/Min/Mean/Norm columns.
  r.statistics = CompareStatistics(t.stats, b.stats);
}

void ByValue(RowResult& r, const Row& t, const Row& b) {
  if (t.checksum == b.checksum) {
    r.result = "pass";
    return;
  }
  if (t.stats.max && b.stats.max) return ByStatistics(r, t, b);
  r.verdict = Verdict::kWarning;
  r.result = "Warning";
  r.message += "The values differ. ";
  r.score = kUnmeasured;
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kWarning:
      return "warning";
    case Verdict::kError:
      return "error";
    case Verdict::kMissing:
      return "missing";
    case Verdict::kExtra:
      return "extra";
  }
  return "?";
}

RowResult CompareRow(const RowPair& pair, const Dump* target,
                     const Dump* baseline, Mode mode) {
  RowResult r;
  r.pair = pair;
  r.mode = mode;
  if (!pair.baseline || !pair.target) {
    r.verdict = pair.target ? Verdict::kExtra : Verdict::kMissing;
    r.result = VerdictName(r.verdict);
    r.message = pair.target
                    ? "No bench data matched. In the target only. "
                    : "In the baseline only: the target has no such row. ";
    r.score = kUnmeasured;
    return r;
  }
  const Row& t = target->rows[*pair.target];
  const Row& b = baseline->rows[*pair.baseline];
  if (pair.shape_differs) {
    SetError(r, "Shape " + ShapeText(t.shape) + " against " +
                    ShapeText(b.shape) + ". ");
    return r;
  }
  if (t.is_tensor != b.is_tensor) {
    SetError(r, "A tensor on one side, a value on the other. ");
    return r;
  }
  if (t.is_tensor && !MsprobeDtypesMatch(t.dtype, b.dtype)) {
    SetError(r, "Dtype " + t.dtype + " against " + b.dtype + ". ");
    return r;
  }
  if (!t.is_tensor) {
    ByValue(r, t, b);
  } else {
    switch (mode) {
      case Mode::kTensor:
        ByTensors(r, t, b, *target, *baseline);
        break;
      case Mode::kStatistics:
        ByStatistics(r, t, b);
        break;
      case Mode::kMd5:
      case Mode::kXor:
        if (t.checksum == b.checksum) {
          r.result = "pass";
        } else {
          r.verdict = Verdict::kError;
          r.result = "Different";
          r.score = std::numeric_limits<double>::infinity();
        }
        break;
    }
  }
  if (t.requires_grad != b.requires_grad) {
    r.message += "Requires_grad inconsistent. ";
    if (r.verdict == Verdict::kPass) {
      r.verdict = Verdict::kWarning;
      r.result = "Warning";
    }
  }
  return r;
}

}  // namespace tprobe::compare
