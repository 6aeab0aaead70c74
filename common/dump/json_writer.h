#ifndef TPROBE_COMMON_DUMP_JSON_WRITER_H_
#define TPROBE_COMMON_DUMP_JSON_WRITER_H_

// Byte-exact emulation of the JSON that msprobe writes with Python's
// json.dump(obj, f, indent=1), so that a tprobe dump.json can be compared
// with an msprobe one by `cmp`, not only by a JSON parser.
//
// The value model is nlohmann::ordered_json: objects keep insertion order, as
// Python dicts do. Python's rules reproduced here:
//   - one space of indent per level; every list element and dict item on its
//     own line; "," at the end of a line, ": " between key and value;
//   - an empty list is "[]" and an empty dict is "{}", with nothing inside;
//   - strings are ASCII only (ensure_ascii=True): `"` `\` and \n \r \t \b \f
//     use their short escapes; every other byte outside 0x20..0x7e is written
//     as \uXXXX with lowercase hex, and code points above U+FFFF as a UTF-16
//     surrogate pair;
//   - floats are repr(float) (PythonFloatRepr), with NaN, Infinity and
//     -Infinity for the non-finite values (allow_nan=True);
//   - integers, both signed and unsigned 64-bit, in decimal;
//   - no trailing newline.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tprobe::dump {

// The JSON value type of every dump file: objects keep insertion order.
using Json = nlohmann::ordered_json;

// Returns exactly the bytes of Python's json.dumps(v, indent=1).
//
// Strings are taken as UTF-8. A byte that does not start a valid UTF-8
// sequence (stray continuation byte, overlong form, encoded surrogate, a
// code point above U+10FFFF, or a truncated sequence) is written as \ufffd,
// one per byte, and the rest of the string is still written; the function
// never fails. A binary value (which JSON cannot hold) is a bug and asserts;
// it is written as null in release builds.
//
// Thread safety: pure; it may be called concurrently on distinct or shared
// (unmodified) values.
std::string PythonJsonDumps(const Json& v);

// Appends `v` to `out` as PythonJsonDumps writes it, for a value that sits
// `depth` levels deep in its document: its items are indented by depth + 1
// spaces and its closing bracket by `depth`.
//
// Thread safety: pure.
void AppendPythonJson(std::string& out, const Json& v, int depth);

// Appends the JSON string of `s`, quotes included, exactly as
// PythonJsonDumps writes strings (ensure_ascii, \ufffd for each byte that is
// not valid UTF-8).
//
// Thread safety: pure.
void AppendPythonString(std::string& out, std::string_view s);

// Returns Python's repr(v) for a float: the shortest digits that round-trip,
// in fixed notation when the decimal exponent is in [-4, 16) ("1.0", "-0.0",
// "0.30000000000000004", "123456789012345.0"), else in exponent notation
// with a sign and at least two exponent digits ("1e-05", "1e+16",
// "1.5e+300"). NaN gives "NaN", and the infinities "Infinity" and "-Infinity",
// which is what json.dumps writes for them.
//
// Thread safety: pure.
std::string PythonFloatRepr(double v);

// Appends PythonFloatRepr(v) to `out`.
//
// Thread safety: pure.
void AppendPythonFloat(std::string& out, double v);

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_JSON_WRITER_H_
