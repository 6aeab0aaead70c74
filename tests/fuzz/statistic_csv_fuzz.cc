// libFuzzer target: `tprobe import` of a statistics-task dump
// (tools/import), whose statistic.csv files MindSpore wrote. The input is
// the text of one statistic.csv, placed as rank_0/net/graph/0/statistic.csv
// of a source tree; the whole import runs (read, order, deduplicate, number,
// write the step tree). It must succeed or fail with an error, never crash.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/import_run.h"
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
  fuzz::RunImport(import::Task::kStatistics, source);
  return 0;
}
