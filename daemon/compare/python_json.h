#ifndef TPROBE_DAEMON_COMPARE_PYTHON_JSON_H_
#define TPROBE_DAEMON_COMPARE_PYTHON_JSON_H_

// Reading the JSON files of a dump tree (dump.json, construct.json), which
// Python's json.dump writes with allow_nan: NaN, Infinity and -Infinity
// appear as bare words, which JSON (and nlohmann_json) does not accept.
//
// They are read as the strings kNaN, kInfinity and kMinusInfinity (a 0x01
// byte first, which json.dump escapes in any real string), and NumberOf
// turns those back into doubles.
//
// Thread safety: every function may be called concurrently.

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
// for text that is not JSON.
Result<Json> ParsePythonJson(std::string_view text, std::string_view what);

// Reads and parses the file at `path`.
Result<Json> ReadPythonJson(const std::string& path);

// The number `value` holds: a JSON number, a bool (1 or 0), or one of the
// three non-finite words. nullopt for anything else (null, a string, ...).
std::optional<double> NumberOf(const Json& value);

}  // namespace tprobe::compare

#endif  // TPROBE_DAEMON_COMPARE_PYTHON_JSON_H_
