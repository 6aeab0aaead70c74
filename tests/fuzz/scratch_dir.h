#ifndef TPROBE_TESTS_FUZZ_SCRATCH_DIR_H_
#define TPROBE_TESTS_FUZZ_SCRATCH_DIR_H_

// A private directory for the fuzz targets that read and write trees
// (the importers): made once per process under $TMPDIR (or /tmp), emptied
// between runs by the target, removed at exit.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tprobe::fuzz {

inline const std::filesystem::path& ScratchDir() {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path d =
        std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
        ("tprobe-fuzz-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(ScratchDir(), ec);
    });
    return d;
  }();
  return dir;
}

// Empties `dir` (made if missing) and returns its path as a string.
inline std::string FreshDir(const std::filesystem::path& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace tprobe::fuzz

#endif  // TPROBE_TESTS_FUZZ_SCRATCH_DIR_H_
