#ifndef TPROBE_TOOLS_COMPARE_INPUT_PYTHON_REPR_H_
#define TPROBE_TOOLS_COMPARE_INPUT_PYTHON_REPR_H_

// Values written as Python's repr() and str() write them, as msprobe's
// rows and CSV cells hold them: floats, texts, lists of texts, shapes.
//
// Thread safety: pure functions.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tprobe::compare {

// `v` as Python's repr(float) writes it: the shortest text that reads
// back to `v`, fixed from 1e-4 up to 1e16 ("0.17349910736083807", "2.0"),
// exponent form otherwise ("1e-05", "1.5e+16"); "nan", "inf", "-inf".
std::string PyRepr(double v);
// Python's repr() of the text `s` (UTF-8): in single quotes, or double
// quotes when it holds a ' and no "; \\, \n, \r, \t and other control
// characters escaped.
std::string PyStrRepr(std::string_view s);
// Python's str() of a list of texts: "['a', 'b']".
std::string PyListRepr(const std::vector<std::string>& items);
// "[2, 3]".
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_INPUT_PYTHON_REPR_H_
