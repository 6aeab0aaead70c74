// Number, shape and file-name formatting for the reports (report_format.h).

#include "daemon/compare/report_format.h"

#include <cmath>
#include <cstdio>

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

std::string FormatNumber(const std::optional<double>& v) {
  return v ? FormatNumber(*v) : "N/A";
}

std::string FormatPercent(const std::optional<double>& fraction) {
  if (!fraction) return "N/A";
  return FormatNumber(*fraction * 100) + "%";
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
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
