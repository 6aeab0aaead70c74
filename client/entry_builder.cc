#include "client/entry_builder.h"

#include <array>
#include <atomic>

#include "client/exception_boundary.h"
#include "client/thread_slot.h"

namespace tprobe::client {
namespace {

// A part's key and its container's opening tag, encoded once.
struct PartKey {
  std::string key;
  char open;
};

const std::array<PartKey, kPartCount>& PartKeys() {
  static const std::array<PartKey, kPartCount> keys = [] {
    auto make = [](std::string_view name, record::ValueTag open) {
      PartKey k;
      record::ValueWriter(&k.key).Key(name);
      k.open = static_cast<char>(open);
      return k;
    };
    return std::array<PartKey, kPartCount>{
        make("input_args", record::ValueTag::kList),
        make("input_kwargs", record::ValueTag::kDict),
        make("input", record::ValueTag::kList),
        make("output", record::ValueTag::kList),
        make("parameters", record::ValueTag::kDict),
    };
  }();
  return keys;
}

constexpr char kEnd = static_cast<char>(record::ValueTag::kEnd);

// The tensor refs this thread gives (NextTensorRef).
struct TensorRefs {
  uint32_t next = 1;
};

}  // namespace

uint32_t NextTensorRef() noexcept {
  // Through a ThreadSlot: a thread_local counter costs a thread-local
  // lookup for its read and another for its write.
  TensorRefs* refs = ThreadSlot<TensorRefs>::Get();
  if (refs == nullptr) [[unlikely]] {
    // The thread is exiting: refs from the top half, shared.
    static std::atomic<uint32_t> late{uint32_t{1} << 31};
    return late.fetch_add(1, std::memory_order_relaxed) | (uint32_t{1} << 31);
  }
  uint32_t ref = refs->next++;
  if (ref == 0) ref = refs->next++;
  return ref;
}

void EntryBuilder::LayOut(const CallPlan& plan) {
  if (!plan.forward) {
    if (plan.input) Open(Part::kInput);
    if (plan.output) Open(Part::kOutput);
    return;
  }
  if (plan.input) {
    Open(Part::kInputArgs);
    Open(Part::kInputKwargs);
  }
  if (plan.output) {
    Open(Part::kOutput);
    if (plan.kind == record::CallKind::kModule) Open(Part::kParameters);
  }
}

record::ValueWriter& EntryBuilder::Open(Part part) noexcept {
  PartBuffer& p = parts_[Index(part)];
  p.state = State::kItems;
  p.bytes.clear();
  return p.writer;
}

record::ValueWriter* EntryBuilder::Items(Part part) {
  PartBuffer& p = parts_[Index(part)];
  return p.state == State::kItems ? &p.writer : nullptr;
}

record::ValueWriter& EntryBuilder::Whole(Part part) noexcept {
  PartBuffer& p = parts_[Index(part)];
  p.state = State::kWhole;
  p.bytes.clear();
  return p.writer;
}

void EntryBuilder::Reset() {
  for (PartBuffer& p : parts_) p.state = State::kClosed;
  extra_.clear();
}

bool EntryBuilder::empty() const noexcept {
  for (const PartBuffer& p : parts_) {
    if (p.state != State::kClosed) return false;
  }
  return extra_.empty();
}

bool EntryBuilder::Tensor(record::ValueWriter& out, DType dtype,
                          std::span<const int64_t> shape, bool requires_grad,
                          const void* data, size_t nbytes) noexcept try {
  const uint32_t ref = NextTensorRef();
  out.TensorRef(ref);
  return recorder_.WriteTensor(ref, dtype, shape, requires_grad, data, nbytes);
} catch (...) {
  NoteStopped("EntryBuilder::Tensor");
  return false;
}

bool EntryBuilder::Write(uint32_t step, uint32_t name_id,
                         uint32_t stack_id) noexcept try {
  static constexpr char kEndText[] = {kEnd};
  const auto& keys = PartKeys();
  std::string_view pieces[kPartCount * 4 + 1];
  size_t n = 0;
  for (size_t i = 0; i < kPartCount; ++i) {
    const PartBuffer& p = parts_[i];
    if (p.state == State::kClosed) continue;
    pieces[n++] = keys[i].key;
    if (p.state == State::kItems) {
      pieces[n++] = std::string_view(&keys[i].open, 1);
      pieces[n++] = p.bytes;
      pieces[n++] = std::string_view(kEndText, 1);
    } else {
      pieces[n++] = p.bytes;
    }
  }
  pieces[n++] = extra_;
  return recorder_.WriteEntry(step, name_id, stack_id,
                              std::span<const std::string_view>(pieces, n));
} catch (...) {
  NoteStopped("EntryBuilder::Write");
  return false;
}

}  // namespace tprobe::client
