#ifndef TPROBE_COMMON_RECORD_WRITER_H_
#define TPROBE_COMMON_RECORD_WRITER_H_

// The one writer of ring records (common/record/record.h): the size of each
// record's payload, and functions that lay a payload out in space the
// caller reserved (shm::RingWriter::Reserve) with exactly that size. The
// entry body is built with ValueWriter. The reader is codec.h.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "common/dtype.h"
#include "common/record/record.h"

namespace tprobe::record {

inline uint32_t InternSize(std::string_view text) {
  return static_cast<uint32_t>(sizeof(InternRecord) + text.size());
}
void PutIntern(std::byte* out, uint32_t id, InternKind kind,
               std::string_view text);

inline constexpr uint32_t kCallSize = sizeof(CallRecord);
void PutCall(std::byte* out, uint64_t seq, uint32_t step, uint32_t name_id,
             CallKind kind, Direction direction);

inline uint32_t TensorSize(size_t ndim) {
  return static_cast<uint32_t>(sizeof(TensorRecord) + ndim * sizeof(int64_t));
}
// `flags`: 0, or kTensorStatsByProducer (no chunks follow), with or without
// kTensorBytesByProducer.
void PutTensor(std::byte* out, uint32_t ref, DType dtype,
               std::span<const int64_t> shape, bool requires_grad,
               uint64_t nbytes, uint8_t flags = 0);

inline constexpr uint32_t kProducerStatsSize = sizeof(ProducerStatsRecord);
void PutProducerStats(std::byte* out, const ProducerStatsRecord& stats);

inline constexpr uint32_t kProducerBytesSize = sizeof(ProducerBytesRecord);
void PutProducerBytes(std::byte* out, const ProducerBytesRecord& bytes);

// A chunk's fixed part; its `size` bytes follow at out + sizeof(ChunkRecord).
inline uint32_t ChunkSize(size_t size) {
  return static_cast<uint32_t>(sizeof(ChunkRecord) + size);
}
void PutChunkHeader(std::byte* out, uint32_t ref, uint64_t offset);

// An entry's fixed part; its body (a value stream) follows at
// out + sizeof(EntryRecord).
inline uint32_t EntrySize(size_t body) {
  return static_cast<uint32_t>(sizeof(EntryRecord) + body);
}
void PutEntryHeader(std::byte* out, uint64_t seq, uint32_t step,
                    uint32_t name_id, uint32_t stack_id);

// Appends tagged values (record.h, ValueTag) to a byte string. It checks
// nothing: the caller writes one value per slot, a Key before each item of
// a dict or body, and closes each List and Dict with End. An encoded value
// is itself a byte string that Raw() appends elsewhere as it is.
class ValueWriter {
 public:
  explicit ValueWriter(std::string* out) : out_(out) {}

  void Null() { Tag(ValueTag::kNull); }
  void Bool(bool b) { Tag(b ? ValueTag::kTrue : ValueTag::kFalse); }
  void Int(int64_t v) {
    Tag(ValueTag::kInt);
    Fixed(v);
  }
  void Float(double v) {
    Tag(ValueTag::kFloat);
    Fixed(v);
  }
  void Str(std::string_view s) { Text(ValueTag::kStr, s); }
  void Key(std::string_view key) { Text(ValueTag::kKey, key); }
  void TensorRef(uint32_t ref) {
    Tag(ValueTag::kTensorRef);
    Fixed(ref);
  }
  void BeginList() { Tag(ValueTag::kList); }
  void BeginDict() { Tag(ValueTag::kDict); }
  // msprobe's {"type": type, "value": v}: the next value is v (no End).
  void Typed(std::string_view type) { Text(ValueTag::kTyped, type); }
  void End() { Tag(ValueTag::kEnd); }
  // A value encoded by another ValueWriter.
  void Raw(std::string_view encoded) { out_->append(encoded); }

  std::string* buffer() const { return out_; }

 private:
  void Tag(ValueTag t) { out_->push_back(static_cast<char>(t)); }
  template <typename T>
  void Fixed(T v) {
    char bytes[sizeof v];
    std::memcpy(bytes, &v, sizeof v);
    out_->append(bytes, sizeof v);
  }
  void Text(ValueTag t, std::string_view s) {
    Tag(t);
    Fixed(static_cast<uint32_t>(s.size()));
    out_->append(s);
  }

  std::string* out_;
};

}  // namespace tprobe::record

#endif  // TPROBE_COMMON_RECORD_WRITER_H_
