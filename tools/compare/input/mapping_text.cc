// The mapping files' text rules (mapping_text.h).

#include "tools/compare/input/mapping_text.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tprobe::compare {

Result<std::string> ReadMappingFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::InvalidArgument(path +
                                   ": cannot open: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": read failed");
  return text.str();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string_view WithoutComment(std::string_view line) {
  const size_t hash = line.find(" #");
  return hash == std::string_view::npos ? line : line.substr(0, hash);
}

bool IsBlankLine(std::string_view trimmed) {
  return trimmed.empty() || trimmed.starts_with("#") || trimmed == "---";
}

KeyValue SplitKeyValue(std::string_view body) {
  size_t colon = body.find(": ");
  if (colon == std::string_view::npos && body.ends_with(":")) {
    colon = body.size() - 1;
  }
  if (colon == std::string_view::npos) return {};
  return {Unquote(Trim(body.substr(0, colon))),
          Unquote(Trim(body.substr(colon + 1)))};
}

std::string_view Unquote(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') &&
      s.back() == s.front()) {
    return s.substr(1, s.size() - 2);
  }
  return s;
}

}  // namespace tprobe::compare
