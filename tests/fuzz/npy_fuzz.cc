// libFuzzer target: the .npy reader (common/dump/npy.h), which the daemon
// and `tprobe import` use on files they did not write. Any bytes must give
// an array whose data size matches its dtype and shape, or an error naming
// the file.

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/dump/npy.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tprobe::fuzz::Check;
  static tprobe::fuzz::MemoryFile file;
  const std::string& path = file.Hold(std::as_bytes(std::span(data, size)));
  auto read = tprobe::dump::ReadNpy(path);
  if (!read.ok()) {
    Check(read.status().message().starts_with(path + ": "),
          "a .npy error names the file");
    return 0;
  }
  size_t elements = 1;
  for (int64_t d : read.value().shape) {
    Check(d >= 0, "no negative dimension");
    elements *= static_cast<size_t>(d);
  }
  Check(read.value().data.size() ==
            elements * tprobe::ElementSize(read.value().dtype),
        "the data holds exactly the shape's elements");
  return 0;
}
