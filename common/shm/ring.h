#ifndef TPROBE_COMMON_SHM_RING_H_
#define TPROBE_COMMON_SHM_RING_H_

// The two views of one SPSC byte ring (common/shm/layout.h): RingWriter for
// the producer inside the trainer, RingReader for the daemon. Both take a
// header and a byte span, so tests run them on heap memory.
//
// Records are length-prefixed and 8-byte aligned. A record never straddles the
// end of the ring: when it does not fit in the bytes left before the end, the
// writer first fills them with a padding record. Nothing becomes visible to
// the reader until Commit() publishes head with one release store, so a
// producer that dies mid-record leaves the ring as it was.
//
// Thread safety: one thread may use a RingWriter and one (other) thread the
// RingReader of the same ring at the same time. Nothing else is safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/shm/layout.h"
#include "common/status.h"

namespace tprobe::shm {

class RingWriter {
 public:
  // REQUIRES: data.size() is a power of two and at least 64 bytes.
  RingWriter(RingHeader* header, std::span<std::byte> data);

  // The largest payload a single record may carry. Larger payloads must be
  // split into several records by the caller (chunking).
  uint32_t MaxPayload() const { return max_payload_; }

  // Reserves a record of `size` payload bytes and returns where to write
  // them, or nullptr when the ring lacks space (nothing is changed then) or
  // size > MaxPayload(). The record is invisible until Commit().
  // REQUIRES: no reservation is pending.
  std::byte* Reserve(uint16_t type, uint32_t size);

  // Publishes the pending reservation (one release store of head).
  void Commit();

  // Bytes free for records right now (a lower bound; the reader may free
  // more concurrently).
  uint64_t FreeBytes() const;

  RingHeader* header() const { return header_; }

 private:
  RingHeader* header_;
  std::byte* data_;
  uint64_t mask_;
  uint32_t max_payload_;
  uint64_t head_;          // private copy of header_->head
  uint64_t pending_head_;  // head after the pending reservation
  uint64_t cached_tail_ = 0;
};

// One record as the reader sees it. `payload` points into the ring and stays
// valid until RingReader::Release().
struct RecordView {
  uint16_t type;
  std::span<const std::byte> payload;
};

class RingReader {
 public:
  // REQUIRES: data.size() is a power of two and at least 64 bytes.
  RingReader(RingHeader* header, std::span<std::byte> data);

  // The next committed record, skipping padding; nullopt when the ring is
  // empty. Returns an error Status when the bytes are not a valid record
  // (a corrupt or foreign segment); the reader then stays unusable.
  Result<std::optional<RecordView>> Peek();

  // Frees the record returned by the last Peek().
  void Release();

  // Bytes committed but not yet released (as the header's head says: a
  // corrupt head gives a meaningless value, never a crash).
  uint64_t Backlog() const;

  // The reader's own position: bytes consumed since the ring was created.
  // Kept in the reader, never re-read from the header.
  uint64_t position() const { return tail_; }

 private:
  RingHeader* header_;
  const std::byte* data_;
  uint64_t mask_;
  uint64_t tail_;
  uint64_t cached_head_ = 0;
  uint64_t peeked_end_ = 0;  // tail after the peeked record; 0 = none
  bool broken_ = false;
};

// The records committed and not yet read: those between the header's tail
// and head, padding not counted. Meant for the producer's view of a ring
// whose reader is gone (a daemon that died): it reads only, and a header
// or record that makes no sense ends the count (what was counted is
// returned).
uint64_t UnreadRecords(const RingHeader& header,
                       std::span<const std::byte> data);

// Initialises a ring header in place (all counters zero).
void InitRing(RingHeader* header);

}  // namespace tprobe::shm

#endif  // TPROBE_COMMON_SHM_RING_H_
