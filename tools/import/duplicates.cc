#include "tools/import/duplicates.h"

#include <unordered_map>
#include <utility>

namespace tprobe::import {

Result<size_t> DropDuplicates(std::vector<TensorRecord>& records,
                              const SameDataFn& same_data, const LogFn& log) {
  std::unordered_map<std::string, size_t> first_of_key;
  std::vector<bool> drop(records.size(), false);
  std::vector<std::string> lines;
  for (size_t i = 0; i < records.size(); ++i) {
    auto [it, inserted] = first_of_key.emplace(SlotKey(records[i].slot), i);
    if (inserted) continue;
    const TensorRecord& first = records[it->second];
    Result<bool> same = same_data(first, records[i]);
    if (!same.ok()) return same.status();
    if (*same) {
      drop[i] = true;
      lines.push_back("dropped duplicate " + records[i].origin +
                      " (same name and data as " + first.origin + ")");
    }
  }
  if (lines.empty()) return size_t{0};

  std::vector<TensorRecord> kept;
  kept.reserve(records.size() - lines.size());
  for (size_t i = 0; i < records.size(); ++i) {
    if (!drop[i]) kept.push_back(std::move(records[i]));
  }
  records = std::move(kept);
  for (const std::string& line : lines) log(line);
  return lines.size();
}

}  // namespace tprobe::import
