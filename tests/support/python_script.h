#ifndef TPROBE_TESTS_SUPPORT_PYTHON_SCRIPT_H_
#define TPROBE_TESTS_SUPPORT_PYTHON_SCRIPT_H_

// Independent truth for the C++ tests: a Python program (numpy, torch, the
// json module) run on the same machine in the same test, so that float
// results are compared with what this CPU computes, never with stored
// numbers.
//
// Thread safety: each call uses files of its own.

#include <string>
#include <vector>

namespace tprobe::testing {

// Runs the Python source `script` with the interpreter `python`, `args` as
// its arguments and `input` on its standard input; returns what it printed
// on standard output. A failing run fails the calling test, with what the
// program wrote on standard error.
std::string RunPythonScript(const std::string& python,
                            const std::string& script,
                            const std::vector<std::string>& args = {},
                            const std::string& input = "");

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_SUPPORT_PYTHON_SCRIPT_H_
