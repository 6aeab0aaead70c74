#include "common/record/writer.h"

#include <cstddef>
#include <cstring>

namespace tprobe::record {

void PutIntern(std::byte* out, uint32_t id, InternKind kind,
               std::string_view text) {
  InternRecord r{};
  r.id = id;
  r.kind = static_cast<uint8_t>(kind);
  std::memcpy(out, &r, sizeof r);
  if (!text.empty()) std::memcpy(out + sizeof r, text.data(), text.size());
}

void PutCall(std::byte* out, uint64_t seq, uint32_t step, uint32_t name_id,
             CallKind kind, Direction direction) {
  // Field by field, straight into the ring (the hook's CallBegin): a record
  // composed on the stack first is read back through a store-forwarding
  // stall.
  std::memcpy(out + offsetof(CallRecord, seq), &seq, sizeof seq);
  std::memcpy(out + offsetof(CallRecord, step), &step, sizeof step);
  std::memcpy(out + offsetof(CallRecord, name_id), &name_id, sizeof name_id);
  out[offsetof(CallRecord, call_kind)] = static_cast<std::byte>(kind);
  out[offsetof(CallRecord, direction)] = static_cast<std::byte>(direction);
  std::memset(out + offsetof(CallRecord, reserved), 0,
              sizeof(CallRecord::reserved));
  static_assert(offsetof(CallRecord, reserved) + sizeof(CallRecord::reserved) ==
                sizeof(CallRecord));
}

void PutTensor(std::byte* out, uint32_t ref, DType dtype,
               std::span<const int64_t> shape, bool requires_grad,
               uint64_t nbytes, uint8_t flags) {
  TensorRecord r{};
  r.flags = flags;
  r.nbytes = nbytes;
  r.ref = ref;
  r.dtype = static_cast<uint8_t>(dtype);
  r.ndim = static_cast<uint8_t>(shape.size());
  r.requires_grad = requires_grad ? 1 : 0;
  std::memcpy(out, &r, sizeof r);
  if (!shape.empty()) {
    std::memcpy(out + sizeof r, shape.data(), shape.size() * sizeof(int64_t));
  }
}

void PutProducerStats(std::byte* out, const ProducerStatsRecord& stats) {
  std::memcpy(out, &stats, sizeof stats);
}

void PutProducerBytes(std::byte* out, const ProducerBytesRecord& bytes) {
  ProducerBytesRecord r = bytes;
  r.reserved = 0;
  std::memcpy(out, &r, sizeof r);
}

void PutChunkHeader(std::byte* out, uint32_t ref, uint64_t offset) {
  ChunkRecord r{};
  r.offset = offset;
  r.ref = ref;
  std::memcpy(out, &r, sizeof r);
}

void PutEntryHeader(std::byte* out, uint64_t seq, uint32_t step,
                    uint32_t name_id, uint32_t stack_id) {
  EntryRecord r{};
  r.seq = seq;
  r.step = step;
  r.name_id = name_id;
  r.stack_id = stack_id;
  std::memcpy(out, &r, sizeof r);
}

}  // namespace tprobe::record
