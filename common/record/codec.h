#ifndef TPROBE_COMMON_RECORD_CODEC_H_
#define TPROBE_COMMON_RECORD_CODEC_H_

// The one reader of ring records (common/record/record.h), with full
// validation: a record from shared memory is untrusted input, so every size
// is checked before use. The writer is common/record/writer.h.

#include <cstdint>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "common/dtype.h"
#include "common/record/record.h"
#include "common/status.h"

namespace tprobe::record {

struct InternView {
  uint32_t id;
  InternKind kind;
  std::string_view text;
};

struct CallView {
  CallRecord call;
  bool begin;  // kCallBegin, else kCallEnd
};

struct TensorView {
  TensorRecord tensor;
  DType dtype;
  std::vector<int64_t> shape;
};

struct ChunkView {
  ChunkRecord chunk;
  std::span<const std::byte> bytes;
};

struct EntryView {
  EntryRecord entry;
  std::span<const std::byte> body;  // a value stream: ReadEntryBody
};

struct ProducerStatsView {
  ProducerStatsRecord stats;  // kinds checked; values by kind
};

struct ProducerBytesView {
  ProducerBytesRecord bytes;
};

// A step boundary or the rank's goodbye: a serialized tprobe.v1.Request, for
// the daemon to parse and check (the codec knows no protobuf).
struct BoundaryView {
  std::span<const std::byte> request;
};

using Decoded =
    std::variant<InternView, CallView, TensorView, ChunkView, EntryView,
                 ProducerStatsView, ProducerBytesView, BoundaryView>;

// Decodes one record. The views point into `payload`. Returns an error that
// names the record type and the defect for a malformed record.
Result<Decoded> Decode(uint16_t type, std::span<const std::byte> payload);

// Receives the values of an entry body in order. Key comes before each item
// of a dict and of the body; BeginList, BeginDict and BeginTyped are each
// closed by one End (a typed value's End follows its one value). Text views
// point into the body.
class ValueVisitor {
 public:
  virtual ~ValueVisitor() = default;
  virtual void Key(std::string_view key) = 0;
  virtual void Null() = 0;
  virtual void Bool(bool value) = 0;
  virtual void Int(int64_t value) = 0;
  virtual void Float(double value) = 0;
  virtual void Str(std::string_view value) = 0;
  virtual void TensorRef(uint32_t ref) = 0;
  virtual void BeginList() = 0;
  virtual void BeginDict() = 0;
  virtual void BeginTyped(std::string_view type) = 0;
  virtual void End() = 0;
};

// Reads an entry body (record.h, ValueTag) into `visitor`. Returns an error
// naming the defect (an unknown tag, a length past the end, an item without
// its key, a container left open, nesting deeper than kMaxValueDepth); the
// visitor may then have seen part of the body, which the caller drops.
Status ReadEntryBody(std::span<const std::byte> body, ValueVisitor& visitor);

}  // namespace tprobe::record

#endif  // TPROBE_COMMON_RECORD_CODEC_H_
