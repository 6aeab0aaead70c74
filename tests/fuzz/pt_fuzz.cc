// libFuzzer target: the .pt reader (tools/compare/input/pt_file.h), which
// `tprobe compare` uses on msprobe's PyTorch tensor files, written by
// someone else. Any bytes must give a layout whose elements lie inside the
// file, or an error naming the file; nothing in them is ever run.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "tools/compare/input/pt_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tprobe::fuzz::Check;
  const std::string path = "fuzz.pt";
  const auto bytes = std::as_bytes(std::span(data, size));
  auto layout = tprobe::compare::ParsePtLayout(path, bytes);
  if (!layout.ok()) {
    Check(layout.status().message().starts_with(path + ": "),
          "a .pt error names the file");
    return 0;
  }
  size_t elements = 1;
  for (int64_t d : layout->shape) {
    Check(d >= 0, "no negative dimension");
    elements *= static_cast<size_t>(d);
  }
  Check(elements == layout->count, "the count is the shape's");
  const size_t bytes_needed = elements * tprobe::ElementSize(layout->dtype);
  Check(
      layout->data_offset <= size && size - layout->data_offset >= bytes_needed,
      "the elements lie inside the file");
  return 0;
}
