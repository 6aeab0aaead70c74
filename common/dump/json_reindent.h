#ifndef TPROBE_COMMON_DUMP_JSON_REINDENT_H_
#define TPROBE_COMMON_DUMP_JSON_REINDENT_H_

// Checks JSON text read back from a file (untrusted: a journal, say) and
// lays it out again as Python's json.dumps(indent=1) would, without building
// a tree: tokens are copied as they are, whitespace between them is
// replaced by the indent=1 layout.

#include <string>
#include <string_view>

namespace tprobe::dump {

// Appends `in`, one JSON value, to `out` in json.dumps(indent=1) layout for
// a value `depth` levels deep (JsonStreamWriter's). `in` may hold any JSON
// whitespace between tokens (so compact text and indented text both do) and
// must be spelt as the writers here spell values: strings of printable
// ASCII with the short escapes \" \\ \n \r \t \b \f or \u and four
// lowercase hex digits; numbers in JSON's grammar, or NaN, Infinity,
// -Infinity; true, false, null. Returns false, leaving `out` as it was, for
// anything else (including text after the value).
//
// Thread safety: pure.
bool ReindentPythonJson(std::string_view in, int depth, std::string& out);

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_JSON_REINDENT_H_
