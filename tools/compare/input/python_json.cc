// Python-flavoured JSON: NaN, Infinity and -Infinity become marked strings
// before nlohmann_json parses the text (python_json.h).

#include "tools/compare/input/python_json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

namespace tprobe::compare {
namespace {

// Copies `text`, quoting the non-finite words outside strings. Runs of
// ordinary characters are copied whole.
std::string QuoteNonFinite(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  size_t i = 0;
  while (i < text.size()) {
    // Outside a string: up to the next quote or the start of a word.
    const size_t stop = text.find_first_of("\"NI-", i);
    if (stop == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, stop - i));
    i = stop;
    auto word_at = [&](std::string_view word) {
      return text.substr(i, word.size()) == word;
    };
    if (text[i] == '"') {
      // Inside a string: up to its closing quote, escapes skipped.
      size_t j = i + 1;
      while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      const size_t end = std::min(j + 1, text.size());
      out.append(text.substr(i, end - i));
      i = end;
    } else if (word_at("NaN")) {
      out += "\"\\u0001NaN\"";
      i += 3;
    } else if (word_at("Infinity")) {
      out += "\"\\u0001Infinity\"";
      i += 8;
    } else if (word_at("-Infinity")) {
      out += "\"\\u0001-Infinity\"";
      i += 9;
    } else {
      out += text[i++];
    }
  }
  return out;
}

}  // namespace

Result<Json> ParsePythonJson(std::string_view text, std::string_view what,
                             const Json::parser_callback_t& callback) {
  const bool plain = text.find("NaN") == std::string_view::npos &&
                     text.find("Infinity") == std::string_view::npos;
  try {
    if (plain) return Json::parse(text, callback);
    return Json::parse(QuoteNonFinite(text), callback);
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string(what) +
                                   ": not valid JSON: " + e.what());
  }
}

Result<Json> ReadPythonJson(const std::string& path,
                            const Json::parser_callback_t& callback) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::InvalidArgument(path +
                                   ": cannot open: " + std::strerror(errno));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": read failed");
  return ParsePythonJson(buffer.view(), path, callback);
}

Result<Json> ReadPythonJsonStreaming(
    const std::string& path, const std::string& key,
    const std::function<void(const std::string&, Json&)>& each) {
  std::string top_key;     // the root's member being parsed
  std::string member_key;  // its member being parsed
  auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key) {
      if (depth == 1) top_key = parsed.get<std::string>();
      if (depth == 2) member_key = parsed.get<std::string>();
      return true;
    }
    const bool complete = event == Json::parse_event_t::value ||
                          event == Json::parse_event_t::object_end ||
                          event == Json::parse_event_t::array_end;
    if (depth == 2 && complete && top_key == key) {
      each(member_key, parsed);
      return false;  // never kept
    }
    return true;
  };
  return ReadPythonJson(path, callback);
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
