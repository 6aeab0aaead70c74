#ifndef TPROBE_COMMON_RECORD_RECORD_H_
#define TPROBE_COMMON_RECORD_RECORD_H_

// The records a producer writes into its rings (the payloads of
// shm::RecordHeader). Fixed parts are plain little-endian structs; variable
// parts follow them. Numbering is part of the layout version: append only.
//
// The stream of one ring, for one dump entry, reads:
//   [Intern…] [CallBegin] … [Tensor Chunk…]… Entry [CallEnd]
// Tensors come before the Entry that refers to them by `ref`. A tensor's
// bytes follow its Tensor record as Chunk records in order; a tensor whose
// chunks stop early (the producer dropped the rest) is incomplete.
//
// Under tprobe.statistics_on framework (and auto, for device tensors) the
// producer computes a tensor's statistics itself: its Tensor record carries
// kTensorStatsByProducer and no chunks, and a ProducerStats record, written
// later by the producer's statistics thread on that thread's own ring,
// completes it. The daemon holds the Entry that refers to such a tensor, and
// every entry after it, until the statistics arrive (drain.h).
//
// Under tasks tensor and overflow_check the producer may also send a tensor's
// bytes later (kTensorBytesByProducer): its statistics thread writes, on its
// own ring, a ProducerBytes record followed by the bytes as Chunk records with
// the tensor's ref, once the framework's asynchronous copy to the host is done.

#include <cstdint>

#include "tprobe/types.h"

namespace tprobe::record {

enum class RecordType : uint16_t {
  kPadding = 0,        // ring filler, never seen by decoders
  kIntern = 1,         // InternRecord + text
  kCallBegin = 2,      // CallRecord
  kCallEnd = 3,        // CallRecord
  kTensor = 4,         // TensorRecord + int64 shape[ndim]
  kChunk = 5,          // ChunkRecord + bytes
  kEntry = 6,          // EntryRecord + the entry's body (a value stream)
  kProducerStats = 7,  // ProducerStatsRecord: statistics the producer made
  kProducerBytes = 8,  // ProducerBytesRecord; Chunk records follow
  kBoundary = 9,       // a serialized tprobe.v1.Request: Start, Step, Goodbye
};

// A Boundary record's payload is at most this large (a Step's ledger with
// every ring's cut and the first lost entry names fits with room to spare).
inline constexpr uint32_t kMaxBoundaryBytes = 64 << 10;

enum class InternKind : uint8_t {
  kName = 0,   // an entry or node name
  kStack = 1,  // a call stack: lines separated by '\0'
};

// Text for `id`; later records refer to it. Ids start at 1; 0 means none.
struct InternRecord {
  uint32_t id;
  uint8_t kind;  // InternKind
  uint8_t reserved[3];
};

// kGroup: msprobe's "optimizer" and "clip_grad" nodes, which are the parent
// of the calls made inside them (daemon/ingest/drain.h).
enum class CallKind : uint8_t { kModule = 0, kApi = 1, kGroup = 2 };
using Direction = ::tprobe::Direction;  // include/tprobe/types.h

// A node of construct.json opens (kCallBegin) or closes (kCallEnd).
struct CallRecord {
  uint64_t seq;  // producer-wide order across the process's rings
  uint32_t step;
  uint32_t name_id;   // the node's full name
  uint8_t call_kind;  // CallKind
  uint8_t direction;  // Direction
  uint8_t reserved[6];
};

// A tensor's metadata; its bytes follow as Chunk records.
struct TensorRecord {
  uint64_t nbytes;
  uint32_t ref;   // referred to by a later Entry's value tree, once
  uint8_t dtype;  // tprobe::DType
  uint8_t ndim;
  uint8_t requires_grad;
  uint8_t flags;  // 0, kTensorStatsByProducer, or both flags
};

// TensorRecord::flags: no chunks follow; a ProducerStats record brings the
// tensor's statistics (nbytes still states the tensor's size).
inline constexpr uint8_t kTensorStatsByProducer = 1;
// TensorRecord::flags, only with kTensorStatsByProducer: a ProducerBytes
// record and its chunks bring the tensor's bytes too (tasks tensor and
// overflow_check).
inline constexpr uint8_t kTensorBytesByProducer = 2;

// How one statistic of a ProducerStats record is spelled in dump.json
// (stats::Stat): its 8 value bytes are 0, 0 or 1, an int64 or a float64.
// kXor, only first and only under summary_mode xor, is msprobe's checksum
// word (stats::XorHex); a 0-d float tensor's checksum is its value, kFloat.
// kCrc, only first and only under summary_mode md5, is the CRC-32 of the
// tensor's bytes (stats::Crc32Hex).
enum class StatKind : uint8_t {
  kNull = 0,
  kBool = 1,
  kInt = 2,
  kFloat = 3,
  kXor = 4,
  kCrc = 5,
};

// The statistics of tensor `ref` of ring `ring` (whose Tensor record carried
// kTensorStatsByProducer), computed by the producer with its framework's
// reductions. Written by the producer's statistics thread on its own ring,
// so it may reach the daemon before or after that Tensor record, but never
// after the Step that ends `step`.
struct ProducerStatsRecord {
  uint32_t ring;
  uint32_t ref;
  uint32_t step;
  uint8_t kinds[4];    // StatKind of Max, Min, Mean, Norm (or a checksum)
  uint64_t values[4];  // little-endian bits, by kind
};

// The bytes of tensor `ref` of ring `ring` (whose Tensor record carried
// kTensorBytesByProducer) follow this record on the same ring as Chunk
// records with that ref, `nbytes` in all. Written by the producer's
// statistics thread, like ProducerStatsRecord and under the same rules.
struct ProducerBytesRecord {
  uint32_t ring;
  uint32_t ref;
  uint32_t step;
  uint32_t reserved;
  uint64_t nbytes;
};

inline constexpr uint8_t kMaxDims = 64;

struct ChunkRecord {
  uint64_t offset;  // byte offset in the tensor
  uint32_t ref;
  uint32_t reserved;
};

// One dump entry (a dump.json item). It refers to tensors sent before it on
// its ring in its step (other entries may come between); each tensor is
// referred to once, and one no entry refers to is dropped with its step.
struct EntryRecord {
  uint64_t seq;
  uint32_t step;
  uint32_t name_id;   // the entry's full name
  uint32_t stack_id;  // 0: no stack
  uint32_t reserved;
};

// The body of an Entry record: the entry's top-level items to the end of the
// record, each a kKey then one value. A flat stream of tagged values (one tag
// byte, then the tag's fixed part, all little-endian, unaligned):
//   kNull, kFalse, kTrue       nothing
//   kInt                       int64
//   kFloat                     float64 (NaN and infinities allowed)
//   kStr, kKey                 u32 length, then that many UTF-8 bytes
//   kTensorRef                 u32: the tensor record with this ref
//   kList                      values, then kEnd
//   kDict                      (kKey, value) items in order, then kEnd
//   kTyped                     u32 length, type text, then exactly one value:
//                              msprobe's {"type": type, "value": value}
// Containers nest at most kMaxValueDepth deep (a kTyped counts as a level).
// An empty body is an entry that only lists its stack in stack.json.
// Writer: common/record/writer.h; reader: common/record/codec.h.
enum class ValueTag : uint8_t {
  kNull = 0,
  kFalse = 1,
  kTrue = 2,
  kInt = 3,
  kFloat = 4,
  kStr = 5,
  kKey = 6,
  kTensorRef = 7,
  kList = 8,
  kDict = 9,
  kTyped = 10,
  kEnd = 11,
};

inline constexpr int kMaxValueDepth = 512;

static_assert(sizeof(InternRecord) == 8);
static_assert(sizeof(CallRecord) == 24);
static_assert(sizeof(TensorRecord) == 16);
static_assert(sizeof(ChunkRecord) == 16);
static_assert(sizeof(EntryRecord) == 24);
static_assert(sizeof(ProducerStatsRecord) == 48);
static_assert(sizeof(ProducerBytesRecord) == 24);

}  // namespace tprobe::record

#endif  // TPROBE_COMMON_RECORD_RECORD_H_
