// What the mapping files' readers share (--mapping, --layer-mapping and
// --api-mapping's YAML subsets): reading the file, blanks around a token,
// and one pair of quotes around a name.

#ifndef TPROBE_TOOLS_COMPARE_INPUT_MAPPING_TEXT_H_
#define TPROBE_TOOLS_COMPARE_INPUT_MAPPING_TEXT_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace tprobe::compare {

// The whole of the file at `path`; an error names it and the cause.
Result<std::string> ReadMappingFile(const std::string& path);

// `s` without leading and trailing spaces and tabs (and a trailing '\r').
std::string_view Trim(std::string_view s);

// `s` without one pair of matching ' or " around it.
std::string_view Unquote(std::string_view s);

// A line without its trailing " # comment".
std::string_view WithoutComment(std::string_view line);

// Whether a trimmed line holds nothing: empty, a comment, or "---".
bool IsBlankLine(std::string_view trimmed);

// "key: value" (or "key:") split at its first ": " (names hold dots, not
// colons), each side trimmed and unquoted; both empty without a colon.
struct KeyValue {
  std::string_view key, value;
};
KeyValue SplitKeyValue(std::string_view body);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_INPUT_MAPPING_TEXT_H_
