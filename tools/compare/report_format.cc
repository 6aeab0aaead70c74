// Number, shape and file-name formatting for the reports (report_format.h).

#include "tools/compare/report_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

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

std::string PyRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // The shortest round-trip digits, in exponent form: d[.ddd]e[+-]XX.
  char buf[64];
  const auto res =
      std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  const size_t e = sci.find('e');
  std::string digits;
  bool negative = false;
  for (char c : sci.substr(0, e)) {
    if (c == '-') negative = true;
    if (c >= '0' && c <= '9') digits += c;
  }
  const int exp = std::atoi(std::string(sci.substr(e + 1)).c_str());
  std::string out = negative ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out += digits + std::string(exp + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char tail[16];
  std::snprintf(tail, sizeof tail, "e%c%02d", exp < 0 ? '-' : '+',
                std::abs(exp));
  return out + tail;
}

std::string FormatMetric(double v) {
  if (std::isnan(v)) return "Nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.12f", v);
  return PyRepr(std::strtod(buf, nullptr));
}

std::string PyStrRepr(std::string_view s) {
  const bool single = s.find('\'') != std::string_view::npos;
  const char quote =
      single && s.find('"') == std::string_view::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == quote) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + quote;
}

std::string PyListRepr(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += PyStrRepr(items[i]);
  }
  return out + "]";
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
