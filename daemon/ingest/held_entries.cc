// The entries held for producer statistics (held_entries.h).

#include "daemon/ingest/held_entries.h"

#include <string>

namespace tprobe::daemon {
namespace {

// Collects the tensor refs of an entry body.
class RefCollector : public record::ValueVisitor {
 public:
  explicit RefCollector(std::vector<uint32_t>* refs) : refs_(refs) {}
  void Key(std::string_view) override {}
  void Null() override {}
  void Bool(bool) override {}
  void Int(int64_t) override {}
  void Float(double) override {}
  void Str(std::string_view) override {}
  void TensorRef(uint32_t ref) override { refs_->push_back(ref); }
  void BeginList() override {}
  void BeginDict() override {}
  void BeginTyped(std::string_view) override {}
  void End() override {}

 private:
  std::vector<uint32_t>* refs_;
};

}  // namespace

Result<std::vector<uint32_t>> HeldEntries::Refs(
    std::span<const std::byte> body) {
  std::vector<uint32_t> refs;
  RefCollector collector(&refs);
  if (Status s = record::ReadEntryBody(body, collector); !s.ok()) return s;
  return refs;
}

Status HeldEntries::Hold(HeldEntry held, std::span<const std::byte> body,
                         const RankLimits& limits) {
  if (entries_.size() >= limits.max_held_entries ||
      bytes_ + body.size() > limits.max_held_entry_bytes) {
    return Status::Error(
        "more than " + std::to_string(limits.max_held_entries) +
        " entries (or " + std::to_string(limits.max_held_entry_bytes) +
        " bytes) wait for producer statistics");
  }
  held.body.assign(body.begin(), body.end());
  bytes_ += held.body.size();
  entries_.push_back(std::move(held));
  return Status::Ok();
}

HeldEntry HeldEntries::PopFront() {
  HeldEntry held = std::move(entries_.front());
  entries_.pop_front();
  bytes_ -= held.body.size();
  return held;
}

}  // namespace tprobe::daemon
