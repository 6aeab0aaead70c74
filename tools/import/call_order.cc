#include "tools/import/call_order.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace tprobe::import {

void SortByExecution(std::vector<TensorRecord>& records) {
  std::stable_sort(records.begin(), records.end(),
                   [](const TensorRecord& a, const TensorRecord& b) {
                     return a.order < b.order;
                   });
}

void AssignCallIndices(std::vector<TensorRecord>& records) {
  std::unordered_map<std::string, uint64_t> next_call;
  for (TensorRecord& record : records) {
    record.call = next_call[SlotKey(record.slot)]++;
  }
}

}  // namespace tprobe::import
