#ifndef TPROBE_CLIENT_ENTRY_BUILDER_H_
#define TPROBE_CLIENT_ENTRY_BUILDER_H_

// The one builder of dump entries, for every front end (the C++ Client, the
// Python binding). It owns msprobe's key order, the body's parts (input,
// output, parameter and gradient slots), tensor refs, the nesting-depth
// limit and stack interning; the front end only walks its framework's
// values into the parts with a record::ValueWriter.
//
// An entry body is its parts in msprobe's order (Part), then any Extra()
// items. A part is either opened as a container whose items are written
// one by one (Open, Items), or written as one whole value (Whole). Write()
// copies the parts straight into the reserved ring space.
//
// Thread safety: one builder per entry, used by one thread.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "client/call_plan.h"
#include "client/recorder.h"
#include "common/dtype.h"
#include "common/internal_api.h"
#include "common/record/writer.h"

namespace tprobe::client {

// msprobe's limit on nesting (Const.DUMP_MAX_DEPTH): a value deeper than
// this is written as null.
inline constexpr int kMaxDepth = 400;
// A typed value, a fallback's value and an output list add a few levels.
static_assert(kMaxDepth + 16 < record::kMaxValueDepth);

// The top-level keys of a call's entry, in msprobe's order.
enum class Part : uint8_t {
  kInputArgs,    // "input_args": a list
  kInputKwargs,  // "input_kwargs": a dict
  kInput,        // "input" (a backward call): a list
  kOutput,       // "output": a list
  kParameters,   // "parameters": a dict
};
inline constexpr size_t kPartCount = 5;

// A new tensor ref of this thread (each thread has its own ring); never 0,
// never reused on a thread, so tensors of an abandoned entry cannot be
// mistaken for a later entry's.
TPROBE_INTERNAL uint32_t NextTensorRef() noexcept;

class TPROBE_INTERNAL EntryBuilder {
 public:
  explicit EntryBuilder(Recorder& core) : recorder_(core) {}
  // The writers point into the builder.
  EntryBuilder(const EntryBuilder&) = delete;
  EntryBuilder& operator=(const EntryBuilder&) = delete;

  // Opens the parts of a call's entry that data_mode keeps, empty: forward
  // input_args and input_kwargs (plan.input), output and, for a module,
  // parameters (plan.output); backward input and output.
  void LayOut(const CallPlan& plan);

  // Opens `part` as an empty container and returns its items' writer: a
  // value per item, and for a dict part a Key before each.
  record::ValueWriter& Open(Part part) noexcept;
  // The items' writer of an opened container part; nullptr when the part is
  // not open (data_mode leaves it out) or was written Whole.
  record::ValueWriter* Items(Part part);
  // Opens `part` as one value the caller writes whole.
  record::ValueWriter& Whole(Part part) noexcept;
  // Leaves `part` out.
  void Drop(Part part) { parts_[Index(part)].state = State::kClosed; }
  // Empties the builder for another entry, keeping its buffers' capacity
  // (a pooled builder: warm, no allocation).
  void Reset();
  // Items after the parts, each a Key then a value (a parameter gradient's
  // {name: [grad]}, a raw entry's keys).
  record::ValueWriter& Extra() { return extra_writer_; }
  // Nothing to write: the entry would only list its stack.
  bool empty() const noexcept;

  // Writes a tensor into this thread's ring and its ref into `out`. The
  // caller has checked that nbytes matches dtype and shape. Returns false
  // when part of it was dropped (the entry still refers to it).
  bool Tensor(record::ValueWriter& out, DType dtype,
              std::span<const int64_t> shape, bool requires_grad,
              const void* data, size_t nbytes) noexcept;

  // Writes the entry (an empty one only lists the stack `stack_id`, 0 for
  // none). Returns false when it was dropped. A planned call's entry is
  // written through Session::WriteEntry, which counts a drop in the ledger.
  bool Write(uint32_t step, uint32_t name_id, uint32_t stack_id) noexcept;

  Recorder& recorder() { return recorder_; }

 private:
  enum class State : uint8_t { kClosed, kItems, kWhole };
  struct PartBuffer {
    State state = State::kClosed;
    std::string bytes;
    record::ValueWriter writer{&bytes};
  };
  static size_t Index(Part p) { return static_cast<size_t>(p); }

  Recorder& recorder_;
  PartBuffer parts_[kPartCount];
  std::string extra_;
  record::ValueWriter extra_writer_{&extra_};
};

// Joins a call's stack lines (stack.json's list) and interns the text on
// this thread's ring.
class StackText {
 public:
  // Forgets the lines, keeping the capacity.
  void Clear() {
    text_.clear();
    first_ = true;
  }
  void Add(std::string_view line) {
    if (!first_) text_.push_back('\0');
    first_ = false;
    text_.append(line);
  }
  bool empty() const { return first_; }
  // The stack's id; 0 when it could not be sent.
  uint32_t Intern(Recorder& core) const {
    return core.Intern(record::InternKind::kStack, text_);
  }

 private:
  std::string text_;
  bool first_ = true;
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_ENTRY_BUILDER_H_
