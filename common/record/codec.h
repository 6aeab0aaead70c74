#ifndef TPROBE_COMMON_RECORD_CODEC_H_
#define TPROBE_COMMON_RECORD_CODEC_H_

// Decoding of ring records (common/record/record.h) with full validation: a
// record from shared memory is untrusted input, so every size is checked
// before use. Encoding is trivial (a fixed struct then bytes) and lives with
// the producer.

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
  std::span<const std::byte> body;  // serialized tprobe.v1.Entry
};

using Decoded =
    std::variant<InternView, CallView, TensorView, ChunkView, EntryView>;

// Decodes one record. The views point into `payload`. Returns an error that
// names the record type and the defect for a malformed record.
Result<Decoded> Decode(uint16_t type, std::span<const std::byte> payload);

}  // namespace tprobe::record

#endif  // TPROBE_COMMON_RECORD_CODEC_H_
