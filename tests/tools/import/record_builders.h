#ifndef TPROBE_TESTS_DAEMON_IMPORT_RECORD_BUILDERS_H_
#define TPROBE_TESTS_DAEMON_IMPORT_RECORD_BUILDERS_H_

// Short ways to write TensorRecords in tests.

#include <string>
#include <vector>

#include "tools/import/tensor_record.h"

namespace tprobe::import::testing {

// A record of `cell`'s tensor, e.g. Rec("Cell.m.M", "forward", "input", 0,
// 17). The tensor object holds {"v": value} so tests can tell data apart.
inline TensorRecord Rec(const std::string& cell, const std::string& direction,
                        const std::string& io, uint32_t index, uint64_t order,
                        double value = 0) {
  TensorRecord r;
  r.slot.cell = cell;
  r.slot.direction =
      direction == "forward" ? Direction::kForward : Direction::kBackward;
  r.slot.io = io == "input" ? Io::kInput : Io::kOutput;
  r.slot.index = index;
  r.order = order;
  r.tensor = dump::Json::object({{"v", value}});
  r.origin = "#" + std::to_string(order);
  return r;
}

// The data names of `records` (after AssignCallIndices), in order.
inline std::vector<std::string> DataNames(
    const std::vector<TensorRecord>& records) {
  std::vector<std::string> names;
  for (const TensorRecord& r : records)
    names.push_back(DataName(r.slot, r.call));
  return names;
}

}  // namespace tprobe::import::testing

#endif  // TPROBE_TESTS_DAEMON_IMPORT_RECORD_BUILDERS_H_
