#ifndef TPROBE_TOOLS_IMPORT_TENSOR_RECORD_H_
#define TPROBE_TOOLS_IMPORT_TENSOR_RECORD_H_

// One dumped tensor on its way from a raw MindSpore dump to dump.json, and
// the records of one step of one rank. Both tasks (tensor files and
// statistic.csv rows) produce these; ordering, duplicate removal, call
// numbering, construct.json and dump.json then work on them alike.

#include <cstdint>
#include <string>
#include <vector>

#include "common/dump/json_writer.h"
#include "tools/import/tensor_name.h"

namespace tprobe::import {

struct TensorRecord {
  TensorSlot slot;
  // Execution order: the TensorDump id, or the row's rank by Timestamp.
  uint64_t order = 0;
  // The tensor object without data_name: "type", "dtype", "shape", then
  // the statistics, in msprobe's key order.
  dump::Json tensor;
  // Where the record came from, for messages: a file path, or "path:line".
  std::string origin;
  // Tensor task: the .npy file to place under data_name. Empty otherwise.
  std::string source_file;
  // Tensor task: CRC-32 of the tensor's bytes, a cheap first test of
  // "identical data" before the bytes are compared.
  uint32_t data_crc = 0;
  // The call of the cell this record belongs to (AssignCallIndices).
  uint64_t call = 0;
};

// The records of step{step}/rank{rank} of the source, in any order.
struct StepRecords {
  uint32_t step = 0;
  int rank = 0;  // as found in the source directory name
  std::vector<TensorRecord> records;
};

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_TENSOR_RECORD_H_
