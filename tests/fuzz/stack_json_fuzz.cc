// libFuzzer target: a dump's stack.json as `tprobe compare` reads it
// (tools/compare/input/dump_rows.cc, both of msprobe's forms) and as its layer
// mapping takes an API's frame scope from it (stack_scope.cc,
// layer_mapping.cc). The input is the text of stack.json, placed beside a
// fixed MindSpore dump.json and construct.json; the dump must load, and the
// dump mapped against itself must give a mapping, whatever the stack says.

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"
#include "tools/compare/input/dump_rows.h"
#include "tools/compare/msprobe/layer_mapping.h"

namespace {

constexpr char kDumpJson[] = R"({"task": "statistics", "level": "mix",
 "framework": "mindspore", "data": {
 "Tensor.__add__.0.forward": {"input_args": [{"type": "mindspore.Tensor",
  "dtype": "Float32", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5,
  "Norm": 1.0}]},
 "Cell.block.Block.forward.0": {"output": [{"type": "mindspore.Tensor",
  "dtype": "Float32", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5,
  "Norm": 1.0}]},
 "Tensor.__mul__.0.forward": {"output": [{"type": "mindspore.Tensor",
  "dtype": "Float32", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5,
  "Norm": 1.0}]},
 "Tensor.__add__.0.backward": {"input": [{"type": "mindspore.Tensor",
  "dtype": "Float32", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5,
  "Norm": 1.0}]}}})";
constexpr char kConstructJson[] =
    R"({"Tensor.__add__.0.forward": null, "Cell.block.Block.forward.0": null,
 "Tensor.__mul__.0.forward": "Cell.block.Block.forward.0",
 "Tensor.__add__.0.backward": null})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace compare = tprobe::compare;
  using tprobe::fuzz::Check;
  const std::string dir =
      tprobe::fuzz::FreshDir(tprobe::fuzz::ScratchDir() / "rank");
  std::ofstream(dir + "/dump.json") << kDumpJson;
  std::ofstream(dir + "/construct.json") << kConstructJson;
  std::ofstream(dir + "/stack.json", std::ios::binary)
      .write(reinterpret_cast<const char*>(data),
             static_cast<std::streamsize>(size));
  auto dump = compare::LoadDump(dir + "/dump.json");
  Check(dump.ok(), "a bad stack.json never fails the dump");
  if (!dump.ok()) return 0;
  Check(dump->entries.size() == 4, "every entry is read");
  static const auto mapping =
      compare::LayerMapping::Parse("Cell:\n  block: block\n", "fuzz.yaml");
  auto data_mapping = mapping->DataMapping(*dump, *dump);
  Check(data_mapping.ok(), "the layer mapping takes any stack");
  return 0;
}
