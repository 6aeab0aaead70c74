// compare_result_*.csv (csv_report.h).

#include "tools/compare/report/csv_report.h"

#include <array>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

#include "common/fs/atomic_file.h"
#include "common/stats/crc32.h"
#include "tools/compare/input/python_repr.h"
#include "tools/compare/msprobe/msprobe_cells.h"
#include "tools/compare/report/report_format.h"

namespace tprobe::compare {
namespace {

constexpr std::string_view kPrefix[] = {
    "NPU Name",          "Bench Name",         "NPU Dtype",
    "Bench Dtype",       "NPU Tensor Shape",   "Bench Tensor Shape",
    "NPU Requires_grad", "Bench Requires_grad"};
constexpr std::string_view kStatsColumns[] = {
    "NPU max",   "NPU min",   "NPU mean",   "NPU l2norm",
    "Bench max", "Bench min", "Bench mean", "Bench l2norm"};

class CsvText {
 public:
  void Cell(std::string_view v) {
    if (!first_) out_ += ',';
    first_ = false;
    // Quoted when needed; a leading formula character is defused with a
    // quote mark, as spreadsheets would run it.
    const bool formula =
        !v.empty() && (v[0] == '=' || v[0] == '+' || v[0] == '@');
    if (v.find_first_of(",\"\n\r") == std::string_view::npos && !formula) {
      out_ += v;
      return;
    }
    out_ += '"';
    if (formula) out_ += '\'';
    for (char c : v) {
      if (c == '"') out_ += '"';
      out_ += c;
    }
    out_ += '"';
  }
  void EndRow() {
    out_ += "\n";
    first_ = true;
  }
  std::string& text() { return out_; }

 private:
  std::string out_;
  bool first_ = true;
};

std::string Bool(const std::optional<bool>& b) {
  if (!b) return "N/A";
  return *b ? "True" : "False";
}

// The statistics of both sides, the verdict and, with stack, the stack:
// the columns that the tensor and statistics modes share after their own.
void StatsAndVerdictColumns(CsvText& csv, bool stack) {
  for (std::string_view c : kStatsColumns) csv.Cell(c);
  for (std::string_view c :
       {"Requires_grad Consistent", "Result", "Err_message"}) {
    csv.Cell(c);
  }
  if (stack) csv.Cell("NPU_Stack_Info");
}

void Header(CsvText& csv, Mode mode, bool stack) {
  for (std::string_view c : kPrefix) csv.Cell(c);
  switch (mode) {
    case Mode::kTensor:
      for (std::string_view c :
           {"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
            "One Thousandth Err Ratio", "Five Thousandths Err Ratio"}) {
        csv.Cell(c);
      }
      StatsAndVerdictColumns(csv, stack);
      csv.Cell("Data_name");
      break;
    case Mode::kStatistics:
      for (std::string_view c :
           {"Max diff", "Min diff", "Mean diff", "L2norm diff",
            "MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr",
            "NormRelativeErr"}) {
        csv.Cell(c);
      }
      StatsAndVerdictColumns(csv, stack);
      break;
    case Mode::kMd5:
    case Mode::kXor:
      for (std::string_view c :
           {"NPU MD5", "BENCH MD5", "Requires_grad Consistent", "Result",
            "Err_message"}) {
        csv.Cell(c);
      }
      if (stack) csv.Cell("NPU_Stack_Info");
      break;
  }
  csv.EndRow();
}

void StatsCells(CsvText& csv, const Row* t, const Row* b) {
  for (const Row* row : {t, b}) {
    for (int i = 0; i < 4; ++i) csv.Cell(StatCellText(row, i));
  }
}

// The MD5 cell: a tensor's CRC-32 (or xor); for a value, as msprobe
// writes it, the CRC-32 of its text ("N/A" for a None).
std::string ChecksumCell(const Row& row) {
  if (row.is_tensor) return row.checksum;
  if (row.dtype == "None") return "N/A";
  return stats::Crc32Hex(stats::Crc32(std::as_bytes(std::span(row.checksum))));
}

// A shape as msprobe writes it: "[2, 3]", "[]" for a value, "None" for a
// None.
std::string ShapeCell(const Row& row) {
  if (!row.shape_text.empty()) return row.shape_text;
  if (!row.is_tensor && row.dtype == "None") return "None";
  return ShapeText(row.shape);
}

// The eight cells every mode's row opens with.
void PrefixCells(CsvText& csv, const Row* t, const Row* b) {
  csv.Cell(t ? t->name : "N/A");
  csv.Cell(b ? b->name : "N/A");
  csv.Cell(t ? t->dtype : "N/A");
  csv.Cell(b ? b->dtype : "N/A");
  csv.Cell(t ? ShapeCell(*t) : "N/A");
  csv.Cell(b ? ShapeCell(*b) : "N/A");
  csv.Cell(t ? Bool(t->requires_grad) : "N/A");
  csv.Cell(b ? Bool(b->requires_grad) : "N/A");
}

// Tensor mode's six metric cells.
void TensorMetricCells(CsvText& csv, const RowResult& r, const Row* t,
                       const Row* b) {
  if (const auto& m = r.tensor) {
    csv.Cell(m->cosine_unsupported ? "unsupported" : FormatMetric(m->cosine));
    csv.Cell(PyRepr(m->euclidean));  // msprobe does not round it
    for (double v : {m->max_abs, m->max_relative, m->one_thousandth,
                     m->five_thousandths}) {
      csv.Cell(FormatMetric(v));
    }
  } else if (t && b && !t->is_tensor && !b->is_tensor) {
    for (int i = 0; i < 6; ++i) csv.Cell("unsupported");
  } else {
    for (int i = 0; i < 6; ++i) csv.Cell("N/A");
  }
}

// The cells after the prefix, in `mode`'s columns; `stack_cell` is
// NPU_Stack_Info's, where the CSV has that column.
void ModeCells(CsvText& csv, Mode mode, const RowResult& r, const Row* t,
               const Row* b, const std::optional<std::string>& stack_cell) {
  const std::string consistent =
      t ? (t->requires_grad == (b ? b->requires_grad : std::nullopt) ? "True"
                                                                     : "False")
        : "N/A";
  switch (mode) {
    case Mode::kTensor:
      TensorMetricCells(csv, r, t, b);
      StatsCells(csv, t, b);
      break;
    case Mode::kStatistics: {
      const std::array<StatDiffCells, 4> d = StatDiffs(t, b);
      for (const StatDiffCells& c : d) csv.Cell(c.diff);
      for (const StatDiffCells& c : d) csv.Cell(c.relative);
      StatsCells(csv, t, b);
      break;
    }
    case Mode::kMd5:
    case Mode::kXor:
      csv.Cell(t ? ChecksumCell(*t) : "N/A");
      csv.Cell(b ? ChecksumCell(*b) : "N/A");
      break;
  }
  csv.Cell(consistent);
  csv.Cell(r.result);
  csv.Cell(r.message);
  if (stack_cell) csv.Cell(*stack_cell);
  if (mode == Mode::kTensor) {
    auto file = [](const Row* row) {
      return row && !row->data_name.empty() ? row->data_name
                                            : std::string("-1");
    };
    csv.Cell("['" + file(t) + "', '" + file(b) + "']");
  }
}

}  // namespace

Status WriteCsv(const PairResult& pair, const std::string& dir) {
  CsvText csv;
  // msprobe's NPU_Stack_Info: where the target has a stack.json, the stack
  // of each entry on its first row, N/A on the others.
  const bool stack = pair.target && pair.target->has_stack;
  Header(csv, pair.mode, stack);
  std::optional<size_t> last_entry;
  for (const RowResult& r : pair.rows) {
    const Row* t = r.pair.target ? &pair.target->rows[*r.pair.target] : nullptr;
    const Row* b =
        r.pair.baseline ? &pair.baseline->rows[*r.pair.baseline] : nullptr;
    std::optional<std::string> stack_cell;
    if (stack) stack_cell = "N/A";
    if (stack && t && t->entry != last_entry) {
      const auto it = pair.target->stacks.find(pair.target->entries[t->entry]);
      if (it != pair.target->stacks.end()) stack_cell = it->second;
    }
    if (t) last_entry = t->entry;
    PrefixCells(csv, t, b);
    ModeCells(csv, pair.mode, r, t, b, stack_cell);
    csv.EndRow();
  }
  const std::string path = dir + "/" + CsvFileName(pair.pair);
  return fs::WriteFileAtomic(path, csv.text());
}

}  // namespace tprobe::compare
