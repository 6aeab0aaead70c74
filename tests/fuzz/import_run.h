#ifndef TPROBE_TESTS_FUZZ_IMPORT_RUN_H_
#define TPROBE_TESTS_FUZZ_IMPORT_RUN_H_

// The whole `tprobe import` of a source tree the importer fuzzers wrote,
// into a fresh destination, quietly, on one thread. It must succeed or fail
// with an error that says why, never crash.

#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"
#include "tools/common/reporter.h"
#include "tools/import/importer.h"

namespace tprobe::fuzz {

inline void RunImport(import::Task task, const std::string& source) {
  import::ImportOptions options;
  options.task = task;
  options.source = source;
  options.destination = FreshDir(ScratchDir() / "dst");
  options.threads = 1;
  tools::Reporter quiet(nullptr, /*show_progress=*/false);
  auto summary = import::Import(options, quiet);
  if (!summary.ok()) {
    Check(!summary.status().message().empty(), "an error says why");
  }
}

}  // namespace tprobe::fuzz

#endif  // TPROBE_TESTS_FUZZ_IMPORT_RUN_H_
