#ifndef TPROBE_TOOLS_IMPORT_TENSOR_FILES_H_
#define TPROBE_TOOLS_IMPORT_TENSOR_FILES_H_

// The tensor task's file work: reading TensorDump .npy files and placing
// them under their msprobe data_name. Source files are only ever read.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/dump/json_writer.h"
#include "common/status.h"

namespace tprobe::import {

struct TensorFileSummary {
  // "type": "mindspore.Tensor", "dtype", "shape", "Max", "Min", "Mean",
  // "Norm", in that order.
  dump::Json tensor;
  uint32_t data_crc = 0;  // CRC-32 of the data bytes
};

// Reads the .npy file at `path` and summarises it. `dtype` is the dtype
// its name gives ("bfloat16"), which dump.json reports; the statistics are
// those of the data in the file (TensorDump stores bfloat16 as float32),
// computed by stats::ComputeStats.
//
// Returns an error starting with "<path>: " that says what is wrong when
// the file cannot be read or is not a valid .npy file.
//
// Thread safety: may be called concurrently.
Result<TensorFileSummary> SummarizeTensorFile(const std::string& path,
                                              std::string_view dtype);

// True when the .npy files `a` and `b` hold the same dtype, shape and data
// bytes. Errors as SummarizeTensorFile.
Result<bool> SameTensorData(const std::string& a, const std::string& b);

// Makes `dst` hold the bytes of `src`: a hard link where the file system
// allows one, else a copy (mode 0640). `dst` is never seen half written: a
// new link appears whole, and a copy or a replacement goes through a
// hidden temporary name (".<name>.tmp<pid>") beside `dst` and a rename.
// Nothing is done when `dst` already is `src`.
// `src` is never modified. The directory of `dst` must exist.
//
// Returns an error naming the paths and the system error.
//
// Thread safety: may be called concurrently for different `dst`.
Status PlaceTensorFile(const std::string& src, const std::string& dst);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_TENSOR_FILES_H_
