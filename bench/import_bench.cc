// Times `tprobe import` (tools/import) on a generated MindSpore tensor dump
// of 10,000 TensorDump files: 4 steps x 2 ranks x 1,250 files of 1,024
// float32 values each (about 42 MB), with a model of 156 nested layers.
// Each iteration is a whole import: read and summarise every file, order
// and number the calls, link the files under their msprobe names and write
// the JSON.
//
// Run: build/bin/import_bench [--benchmark_min_time=…]

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/dump/npy.h"
#include "tools/common/parallel.h"
#include "tools/import/importer.h"

namespace tprobe::import {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 4;
constexpr int kRanks = 2;
constexpr int kLayers = 156;  // 8 files a layer, plus the model's 2
constexpr int kValues = 1024;

// The generated dump, made once and removed at exit.
class Dump {
 public:
  Dump()
      : root_(fs::temp_directory_path() /
              ("tprobe_import_bench_" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
    for (int step = 0; step < kSteps; ++step) {
      for (int rank = 0; rank < kRanks; ++rank) WriteStep(step, rank);
    }
  }
  ~Dump() { fs::remove_all(root_); }

  std::string source() const { return (root_ / "src").string(); }
  std::string destination() const { return (root_ / "out").string(); }
  size_t files() const { return files_; }

 private:
  void WriteStep(int step, int rank) {
    const fs::path dir = root_ / "src" / ("step" + std::to_string(step)) /
                         ("rank" + std::to_string(rank)) / "dump_tensor_data";
    fs::create_directories(dir);
    uint64_t id = 0;
    auto write = [&](const std::string& stem) {
      std::vector<float> values(kValues);
      for (int i = 0; i < kValues; ++i) {
        values[i] = static_cast<float>((i * 37 + id * 11) % 1001) / 100.0f - 5;
      }
      const int64_t shape[] = {kValues};
      const std::string path =
          (dir / (stem + "_float32_" + std::to_string(id++) + ".npy")).string();
      Status s = dump::WriteNpy(path, DType::kFloat32, shape,
                                std::as_bytes(std::span(values)));
      if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
      ++files_;
    };
    write("Cell.model.Model.forward.input.0");
    for (int l = 0; l < kLayers; ++l) {
      const std::string layer = "Cell.model.layers." + std::to_string(l);
      const std::string path = "model.layers." + std::to_string(l);
      write(layer + ".Block.forward.input.0");
      write("Cell." + path + ".attn.Attention.forward.input.0");
      write("Cell." + path + ".attn.Attention.forward.output.0");
      write("Cell." + path + ".mlp.MLP.forward.input.0");
      write("Cell." + path + ".mlp.act.GELU.forward.input.0");
      write("Cell." + path + ".mlp.act.GELU.forward.output.0");
      write("Cell." + path + ".mlp.MLP.forward.output.0");
      write(layer + ".Block.forward.output.0");
    }
    write("Cell.model.Model.forward.output.0");
  }

  fs::path root_;
  size_t files_ = 0;
};

const Dump& GeneratedDump() {
  static const Dump dump;
  return dump;
}

// Arg 0: worker threads (0: hardware_concurrency). Arg 1: 1 to start each
// iteration from an empty destination (a first import, which creates every
// link), 0 to re-run into the last one's (links already in place).
void BM_ImportTensorDump(benchmark::State& state) {
  const Dump& dump = GeneratedDump();
  ImportOptions options;
  options.task = Task::kTensor;
  options.source = dump.source();
  options.destination = dump.destination();
  options.threads = static_cast<size_t>(state.range(0));
  const bool fresh = state.range(1) == 1;
  tools::Reporter quiet(nullptr, false);
  for (auto _ : state) {
    if (fresh) {
      state.PauseTiming();
      fs::remove_all(options.destination);
      state.ResumeTiming();
    }
    Result<ImportSummary> summary = Import(options, quiet);
    if (!summary.ok()) {
      state.SkipWithError(summary.status().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(summary->tensors);
  }
  state.counters["files"] = static_cast<double>(dump.files());
  state.counters["files/s"] =
      benchmark::Counter(static_cast<double>(dump.files()),
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(
      options.threads == 0 ? tools::DefaultThreadCount() : options.threads);
}
BENCHMARK(BM_ImportTensorDump)
    ->ArgNames({"threads", "fresh"})
    ->Args({1, 1})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({0, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace tprobe::import

BENCHMARK_MAIN();
