#ifndef TPROBE_TOOLS_COMPARE_INPUT_PYTHON_JSON_H_
#define TPROBE_TOOLS_COMPARE_INPUT_PYTHON_JSON_H_

// Reading the JSON files of a dump tree (dump.json, construct.json), which
// Python's json.dump writes with allow_nan: NaN, Infinity and -Infinity
// appear as bare words, which JSON (and nlohmann_json) does not accept.
//
// They are read as the strings kNaN, kInfinity and kMinusInfinity (a 0x01
// byte first, which json.dump escapes in any real string), and NumberOf
// turns those back into doubles.
//
// Thread safety: every function may be called concurrently.

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tprobe::compare {

using Json = nlohmann::ordered_json;  // keeps dump.json's key order

inline constexpr std::string_view kNaN = "\x01NaN";
inline constexpr std::string_view kInfinity = "\x01Infinity";
inline constexpr std::string_view kMinusInfinity = "\x01-Infinity";

// Parses `text`. Returns an error naming `what` (a path) and the position
// for text that is not JSON. `callback` (may be empty) is nlohmann_json's
// parser callback: it sees every value as it is parsed and may drop it
// from the result, which keeps a large object from being built at all
// (an ordered_json object inserts in linear time).
Result<Json> ParsePythonJson(std::string_view text, std::string_view what,
                             const Json::parser_callback_t& callback = nullptr);

// Reads and parses the file at `path`.
Result<Json> ReadPythonJson(const std::string& path,
                            const Json::parser_callback_t& callback = nullptr);

// The members of the object at `key` of the root object, one at a time in
// file order, without building that object: `each(name, value)` is called
// for each (and may move from `value`). The rest of the root comes back.
Result<Json> ReadPythonJsonStreaming(
    const std::string& path, const std::string& key,
    const std::function<void(const std::string&, Json&)>& each);

// The number `value` holds: a JSON number, a bool (1 or 0), or one of the
// three non-finite words. nullopt for anything else (null, a string, ...).
std::optional<double> NumberOf(const Json& value);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_INPUT_PYTHON_JSON_H_
