#ifndef TPROBE_COMMON_SHM_LAYOUT_H_
#define TPROBE_COMMON_SHM_LAYOUT_H_

// The shared-memory contract between one trainer process (the producer) and
// tprobed (the consumer). Plain fixed-width structs only: no pointers, no
// mutex, no allocator. See common/shm/README.md for the byte diagram and the
// publication order.
//
// A segment is:
//   SegmentHeader | RingHeader 0 | ring 0 bytes | RingHeader 1 | ring 1 bytes …
// Every ring but the last holds ring_bytes, a power of two; the last, the
// producer's boundary ring (README.md), holds last_ring_bytes, also a power
// of two: it carries only step boundaries, so it is much smaller.

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tprobe::shm {

inline constexpr uint64_t kSegmentMagic =
    0x3142'4F52'5054'5054ULL;  // "TPTPROB1"
inline constexpr uint32_t kLayoutVersion = 3;
inline constexpr size_t kCacheLine = 64;
inline constexpr size_t kRecordAlign = 8;

// Written once by the daemon before the segment name is handed to the
// producer; read-only afterwards.
struct alignas(kCacheLine) SegmentHeader {
  uint64_t magic;
  uint32_t layout_version;
  uint32_t ring_count;
  uint64_t ring_bytes;   // data bytes of each ring but the last (power of two)
  int32_t producer_pid;  // the registered trainer process
  // The producer's current step, stored by the producer (relaxed) at each
  // step boundary; tprobed reads it only to tell an operator that a step
  // already passed.
  uint32_t producer_step;
  uint64_t producer_start_time;  // /proc/<pid>/stat starttime, clock ticks
  // The operator's live capture directive (common/shm/directive.h), one of
  // the two fields the daemon changes after creation: stored by the daemon
  // with release order, loaded by the producer with acquire order through
  // std::atomic_ref at each step boundary. 0: follow the config.
  uint64_t directive;
  // Bumped by the daemon (release) when `tprobe configure` offers the
  // producer a new config; the producer loads it (acquire) at each step
  // boundary and, when it changed, fetches the config over its control
  // connection (FetchConfig). 0: the config it registered with.
  uint64_t config_generation;
  uint64_t last_ring_bytes;  // data bytes of the last ring (power of two)
};

// Why a record was not written. Indexes RingHeader::dropped.
enum class DropReason : uint32_t {
  kRingFull = 0,  // no space (policy drop, or block timed out)
  kTooLarge = 1,  // a record larger than half the ring (never chunked)
  kCount = 2,
};

// One single-producer/single-consumer byte ring. head and tail are monotonic
// byte counters (never wrap); position = counter & (ring_bytes - 1).
struct alignas(kCacheLine) RingHeader {
  // Producer side. The producer writes record bytes, then stores head with
  // release order (once per batch of records, common/shm/ring.h); the
  // consumer loads head with acquire order.
  alignas(kCacheLine) std::atomic<uint64_t> head;
  // Consumer side. The consumer stores tail with release order once it no
  // longer reads the bytes; the producer loads it with acquire order.
  alignas(kCacheLine) std::atomic<uint64_t> tail;
  // Producer-written statistics (single writer each): records_written and
  // bytes_written count committed records, which head may not show yet.
  alignas(kCacheLine) std::atomic<uint64_t> records_written;
  std::atomic<uint64_t> bytes_written;
  std::atomic<uint64_t> dropped[static_cast<size_t>(DropReason::kCount)];
  // 0 while the ring is free; the producer's thread id once a thread owns it.
  std::atomic<uint32_t> owner_tid;
};

// The header that precedes every record. Records start at multiples of
// kRecordAlign; a record occupies AlignedRecordSize(size) bytes.
struct RecordHeader {
  uint32_t size;   // payload bytes after this header (unpadded)
  uint16_t type;   // record::RecordType; 0 = padding up to the ring's end
  uint16_t flags;  // reserved, 0
};

constexpr uint64_t AlignedRecordSize(uint64_t payload) {
  return (sizeof(RecordHeader) + payload + kRecordAlign - 1) &
         ~(kRecordAlign - 1);
}

constexpr uint64_t RingStride(uint64_t ring_bytes) {
  return sizeof(RingHeader) + ring_bytes;
}

// REQUIRES: ring_count >= 1.
constexpr uint64_t SegmentBytes(uint32_t ring_count, uint64_t ring_bytes,
                                uint64_t last_ring_bytes) {
  return sizeof(SegmentHeader) + (ring_count - 1) * RingStride(ring_bytes) +
         RingStride(last_ring_bytes);
}

static_assert(sizeof(SegmentHeader) == kCacheLine);
static_assert(sizeof(RecordHeader) == kRecordAlign);
static_assert(sizeof(RingHeader) % kCacheLine == 0);
static_assert(offsetof(RingHeader, tail) - offsetof(RingHeader, head) >=
              kCacheLine);
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "the ring needs lock-free 64-bit atomics in shared memory");
static_assert(std::atomic<uint32_t>::is_always_lock_free);

}  // namespace tprobe::shm

#endif  // TPROBE_COMMON_SHM_LAYOUT_H_
