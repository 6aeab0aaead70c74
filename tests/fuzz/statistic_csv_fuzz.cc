// libFuzzer target: `tprobe import` of a statistics-task dump
// (daemon/import), whose statistic.csv files MindSpore wrote. The input is
// the text of one statistic.csv, placed as rank_0/net/graph/0/statistic.csv
// of a source tree; the whole import runs (read, order, deduplicate, number,
// write the step tree). It must succeed or fail with an error, never crash.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "daemon/import/importer.h"
#include "daemon/import/reporter.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fuzz = tprobe::fuzz;
  namespace import = tprobe::import;
  const auto source = fuzz::FreshDir(fuzz::ScratchDir() / "src");
  const auto step_dir = fuzz::FreshDir(fuzz::ScratchDir() / "src" / "rank_0" /
                                       "net" / "graph" / "0");
  std::ofstream(step_dir + "/statistic.csv", std::ios::binary)
      .write(reinterpret_cast<const char*>(data),
             static_cast<std::streamsize>(size));
  import::ImportOptions options;
  options.task = import::Task::kStatistics;
  options.source = source;
  options.destination = fuzz::FreshDir(fuzz::ScratchDir() / "dst");
  options.threads = 1;
  import::Reporter quiet(nullptr, /*show_progress=*/false);
  auto summary = import::Import(options, quiet);
  if (!summary.ok()) {
    fuzz::Check(!summary.status().message().empty(), "an error says why");
  }
  return 0;
}
