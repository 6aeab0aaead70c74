// msprobe 26.x's statistics cells (msprobe_cells.h).

#include "tools/compare/msprobe/msprobe_cells.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "tools/compare/input/python_repr.h"

namespace tprobe::compare {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One side's statistic as msprobe's table holds it.
struct Cell {
  enum Kind { kNA, kNumber, kOther } kind = kNA;
  double value = 0;
  std::string text = "N/A";
};

const std::optional<double>& StatOf(const Stats& s, int i) {
  switch (i) {
    case 0:
      return s.max;
    case 1:
      return s.min;
    case 2:
      return s.mean;
    default:
      return s.norm;
  }
}

Cell CellOf(const Row* row, int i) {
  if (!row) return {};
  const std::optional<double>& stat = StatOf(row->stats, i);
  // msprobe turns a bool into its text before comparing.
  if (!stat || (!row->is_tensor && row->dtype == "<class 'bool'>")) {
    std::string text = "None";
    if (!row->is_tensor && !row->checksum.empty()) text = row->checksum;
    return {Cell::kOther, 0, text};
  }
  const double v = *stat;
  if ((row->stats.boolean >> i) & 1) {
    return {Cell::kOther, v, v != 0 ? "True" : "False"};
  }
  std::string text;
  if (std::isinf(v)) {
    text = v > 0 ? " inf" : " -inf";  // msprobe's CSV keeps Excel off them
  } else if (std::isnan(v)) {
    text = "nan";
  } else if ((row->stats.integral >> i) & 1) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    text = buf;
  } else {
    text = PyRepr(v);
  }
  return {Cell::kNumber, v, text};
}

StatDiffCells Same(const std::string& text) {
  StatDiffCells c;
  c.diff = c.relative = text;
  return c;
}

StatDiffCells DiffOf(const Cell& n, const Cell& b) {
  if (n.kind == Cell::kNA || b.kind == Cell::kNA) return Same("N/A");
  if (n.text == b.text) return Same("0");
  if (n.kind == Cell::kOther || b.kind == Cell::kOther) return Same("Diff");
  const double x = n.value, y = b.value;
  if (std::isnan(x) || std::isnan(y)) {
    StatDiffCells c = Same("Nan");
    c.as_float = std::numeric_limits<double>::quiet_NaN();
    return c;
  }
  if (std::isinf(x) || std::isinf(y)) {
    const bool positive = std::isinf(x) ? x > 0 : y < 0;
    StatDiffCells c = Same(positive ? "inf" : "-inf");
    c.as_float = positive ? kInf : -kInf;
    return c;
  }
  StatDiffCells c;
  const double d = x - y;
  c.diff = PyRepr(d);
  if (y == 0) {
    c.relative = "inf";
    c.as_float = kInf;
    return c;
  }
  const double pct = std::fabs(d / y * 100);
  c.relative = PyRepr(pct) + "%";
  c.percent = c.as_float = pct / 100;
  return c;
}

}  // namespace

std::string StatCellText(const Row* row, int i) { return CellOf(row, i).text; }

std::array<StatDiffCells, 4> StatDiffs(const Row* target, const Row* baseline) {
  std::array<StatDiffCells, 4> out;
  for (int i = 0; i < 4; ++i) {
    out[i] = target && baseline ? DiffOf(CellOf(target, i), CellOf(baseline, i))
                                : Same("N/A");
  }
  return out;
}

}  // namespace tprobe::compare
