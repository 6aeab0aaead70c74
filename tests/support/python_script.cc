#include "tests/support/python_script.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>

#include "tests/support/daemon_process.h"

namespace tprobe::testing {
namespace {

// A path for this process's `n`th script, under gtest's temporary folder.
std::string ScratchPath(const std::string& suffix) {
  static std::atomic<int> counter{0};
  return ::testing::TempDir() + "tprobe_python_" + std::to_string(::getpid()) +
         "_" + std::to_string(counter++) + suffix;
}

// `text` quoted for /bin/sh.
std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string RunPythonScript(const std::string& python,
                            const std::string& script,
                            const std::vector<std::string>& args,
                            const std::string& input) {
  const std::string script_path = ScratchPath(".py");
  const std::string input_path = ScratchPath(".in");
  const std::string errors_path = ScratchPath(".err");
  std::ofstream(script_path, std::ios::binary) << script;
  std::ofstream(input_path, std::ios::binary) << input;
  std::string command = Quoted(python) + " " + Quoted(script_path);
  for (const std::string& arg : args) command += " " + Quoted(arg);
  command += " < " + Quoted(input_path) + " 2> " + Quoted(errors_path);
  std::string out;
  const int status = RunCommand(command, &out, /*with_stderr=*/false);
  EXPECT_EQ(status, 0) << "python failed: " << command << "\n"
                       << ReadFile(errors_path);
  for (const std::string& path : {script_path, input_path, errors_path}) {
    std::remove(path.c_str());
  }
  return out;
}

}  // namespace tprobe::testing
