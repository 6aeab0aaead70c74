// libFuzzer target: `tprobe import` of a tensor-task dump (tools/import):
// TensorDump .npy files whose names and bytes MindSpore wrote. The input is
// a list of files ([u8 name length][name][u16 size][bytes], repeated),
// placed in step0/rank0/dump_tensor_data/ of a source tree; the whole
// import runs (parse the names, read and summarise every .npy, order,
// deduplicate, number, place the files and write the step tree). It must
// succeed or fail with an error, never crash.

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/import_run.h"
#include "tests/fuzz/scratch_dir.h"

namespace {

// A name the file system takes as one plain entry of a directory.
bool PlainName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fuzz = tprobe::fuzz;
  namespace import = tprobe::import;
  const auto source = fuzz::FreshDir(fuzz::ScratchDir() / "src");
  const auto data_dir = fuzz::FreshDir(fuzz::ScratchDir() / "src" / "step0" /
                                       "rank0" / "dump_tensor_data");
  fuzz::Cursor in(data, size);
  for (int files = 0; in.left() > 0 && files < 16; ++files) {
    const auto name_bytes = in.Bytes(in.Take<uint8_t>());
    const std::string name(reinterpret_cast<const char*>(name_bytes.data()),
                           name_bytes.size());
    const auto bytes = in.Bytes(in.Take<uint16_t>());
    if (!PlainName(name)) continue;
    std::ofstream(data_dir + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  fuzz::RunImport(import::Task::kTensor, source);
  return 0;
}
