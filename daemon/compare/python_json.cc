// Python-flavoured JSON: NaN, Infinity and -Infinity become marked strings
// before nlohmann_json parses the text (python_json.h).

#include "daemon/compare/python_json.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace tprobe::compare {
namespace {

// Copies `text`, quoting the non-finite words outside strings.
std::string QuoteNonFinite(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    auto word_at = [&](std::string_view word) {
      return text.substr(i, word.size()) == word;
    };
    if (c == 'N' && word_at("NaN")) {
      out += "\"\\u0001NaN\"";
      i += 2;
    } else if (c == 'I' && word_at("Infinity")) {
      out += "\"\\u0001Infinity\"";
      i += 7;
    } else if (c == '-' && word_at("-Infinity")) {
      out += "\"\\u0001-Infinity\"";
      i += 8;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Result<Json> ParsePythonJson(std::string_view text, std::string_view what) {
  const bool plain = text.find("NaN") == std::string_view::npos &&
                     text.find("Infinity") == std::string_view::npos;
  try {
    if (plain) return Json::parse(text);
    return Json::parse(QuoteNonFinite(text));
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string(what) +
                                   ": not valid JSON: " + e.what());
  }
}

Result<Json> ReadPythonJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::InvalidArgument(path +
                                   ": cannot open: " + std::strerror(errno));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": read failed");
  return ParsePythonJson(buffer.view(), path);
}

std::optional<double> NumberOf(const Json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_boolean()) return value.get<bool>() ? 1.0 : 0.0;
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    if (s == kNaN) return std::numeric_limits<double>::quiet_NaN();
    if (s == kInfinity) return std::numeric_limits<double>::infinity();
    if (s == kMinusInfinity) return -std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

}  // namespace tprobe::compare
