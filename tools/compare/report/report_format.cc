// Number and file-name formatting for the reports (report_format.h).

#include "tools/compare/report/report_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tools/compare/input/python_repr.h"

namespace tprobe::compare {

std::string FormatNumber(double v) {
  if (std::isnan(v)) return "Nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  if (std::fabs(v) >= 1e15) {
    std::snprintf(buf, sizeof buf, "%.12g", v);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.12f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s += '0';
  if (s == "-0.0") s = "0.0";
  return s;
}

std::string FormatMetric(double v) {
  if (std::isnan(v)) return "Nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.12f", v);
  return PyRepr(std::strtod(buf, nullptr));
}

std::string FormatNumber(const std::optional<double>& v) {
  return v ? FormatNumber(*v) : "N/A";
}

std::string CsvFileName(const DumpPair& pair) {
  if (pair.label.empty()) return "compare_result.csv";
  std::string name = "compare_result_";
  for (char c : pair.label) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '-';
    name += plain ? c : '_';
  }
  return name + ".csv";
}

}  // namespace tprobe::compare
