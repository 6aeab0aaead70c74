// A rank's intern tables (intern_tables.h).

#include "daemon/ingest/intern_tables.h"

#include <string_view>

namespace tprobe::daemon {

Status InternTables::Add(const record::InternView& v,
                         const RankLimits& limits) {
  const bool name = v.kind == record::InternKind::kName;
  const bool known = name ? names_.contains(v.id) : stacks_.contains(v.id);
  if ((!known && names_.size() + stacks_.size() >= limits.max_interned) ||
      bytes_ + v.text.size() > limits.max_interned_bytes) {
    return Status::Error("more interned names and stacks than the limit of " +
                         std::to_string(limits.max_interned) + " (or " +
                         std::to_string(limits.max_interned_bytes) + " bytes)");
  }
  bytes_ += v.text.size();
  if (name) {
    names_[v.id] = std::string(v.text);
    return Status::Ok();
  }
  std::vector<std::string> lines;
  std::string_view text = v.text;
  while (!text.empty()) {
    const size_t end = text.find('\0');
    lines.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  stacks_[v.id] = std::move(lines);
  return Status::Ok();
}

const std::string* InternTables::Name(uint32_t id) const {
  auto it = names_.find(id);
  return it == names_.end() ? nullptr : &it->second;
}

const std::vector<std::string>* InternTables::Stack(uint32_t id) const {
  auto it = stacks_.find(id);
  return it == stacks_.end() ? nullptr : &it->second;
}

}  // namespace tprobe::daemon
