#ifndef TPROBE_COMMON_SHM_RING_H_
#define TPROBE_COMMON_SHM_RING_H_

// The two views of one SPSC byte ring (common/shm/layout.h): RingWriter for
// the producer inside the trainer, RingReader for the daemon. Both take a
// header and a byte span, so tests run them on heap memory.
//
// Records are length-prefixed and 8-byte aligned. A record never straddles the
// end of the ring: when it does not fit in the bytes left before the end, the
// writer first fills them with a padding record. Nothing becomes visible to
// the reader until head is published with one release store, so a producer
// that dies mid-record leaves the ring as it was.
//
// Publication is batched: Commit() ends a record in the writer only, and head
// is stored once per kPublishRecords records or PublishBytes() bytes, when a
// reservation finds the ring full (so the reader can free it), and whenever
// the owner calls Publish(). Another thread of the producer process (the one
// that ends a step, flushes or says goodbye) publishes on the owner's behalf
// with PublishCommitted(), from the committed head the writer mirrors into
// process memory. records_written and bytes_written count committed records,
// so they may run ahead of what head shows until the next publication; a
// producer killed in between loses its unpublished records (the reader never
// sees them).
//
// Thread safety: one thread may use a RingWriter and one (other) thread the
// RingReader of the same ring at the same time; PublishCommitted() may be
// called from any thread of the producer. Nothing else is safe.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/shm/layout.h"
#include "common/status.h"

namespace tprobe::shm {

class RingWriter {
 public:
  // Head is published at least once per this many committed records.
  static constexpr uint64_t kPublishRecords = 32;

  // `committed`, when given, receives the committed head (release) at every
  // Commit(), for PublishCommitted(); it is process memory of the producer
  // and must outlive the writer.
  // REQUIRES: data.size() is a power of two and at least 64 bytes.
  RingWriter(RingHeader* header, std::span<std::byte> data,
             std::atomic<uint64_t>* committed = nullptr);

  // The largest payload a single record may carry. Larger payloads must be
  // split into several records by the caller (chunking).
  uint32_t MaxPayload() const { return max_payload_; }

  // Head is published at least once per this many committed bytes: an
  // eighth of the ring, at most 64 KiB.
  uint64_t PublishBytes() const { return publish_bytes_; }

  // Reserves a record of `size` payload bytes and returns where to write
  // them, or nullptr when the ring lacks space (then every committed record
  // is published, and nothing else is changed) or size > MaxPayload(). The
  // record is invisible until it is committed and published.
  // REQUIRES: no reservation is pending.
  std::byte* Reserve(uint16_t type, uint32_t size) {
    // Inline, the common case: the record fits before the ring's end in
    // room already known free.
    const uint64_t need = AlignedRecordSize(size);
    const uint64_t pos = head_ & mask_;
    if (size <= max_payload_ && need <= mask_ + 1 - pos &&
        head_ + need - cached_tail_ <= mask_ + 1) {
      return Place(head_, type, size, need);
    }
    return ReserveSlow(type, size);
  }

  // Ends the pending reservation: counts it in records_written and
  // bytes_written, and publishes head when the batch is full.
  void Commit() {
    bytes_written_ += pending_head_ - head_;
    head_ = pending_head_;
    // The mirror first: whoever sees the counters below (acquire) and then
    // loads the mirror finds these records in it.
    if (committed_ != nullptr) {
      committed_->store(head_, std::memory_order_release);
    }
    // Single writer: plain stores, no locked read-modify-write.
    header_->records_written.store(++records_written_,
                                   std::memory_order_release);
    header_->bytes_written.store(bytes_written_, std::memory_order_release);
    if (++unpublished_records_ >= kPublishRecords ||
        head_ - published_head_ >= publish_bytes_) {
      Publish();
    }
  }

  // Makes every committed record visible to the reader (one release store
  // of head; nothing when nothing is unpublished).
  void Publish();

  // Bytes free for records right now (a lower bound; the reader may free
  // more concurrently).
  uint64_t FreeBytes() const;

  RingHeader* header() const { return header_; }
  // The head after the last committed record (published or not).
  uint64_t committed_head() const { return head_; }

 private:
  // The lines this far ahead of a new record are likely still in the
  // reader's cache: they are asked for (to be written) at each record, so
  // that the stores of the records to come do not wait.
  static constexpr uint64_t kPrefetchAhead = 4 * kCacheLine;

  std::byte* ReserveSlow(uint16_t type, uint32_t size);
  // Writes the header of a record of `size` payload bytes at `at` (room
  // checked) and makes it the pending one.
  std::byte* Place(uint64_t at, uint16_t type, uint32_t size, uint64_t need) {
    auto* rec = reinterpret_cast<RecordHeader*>(data_ + (at & mask_));
    PrefetchForWrite(data_ + ((at + kPrefetchAhead) & mask_));
    rec->size = size;
    rec->type = type;
    rec->flags = 0;
    pending_head_ = at + need;
    return reinterpret_cast<std::byte*>(rec + 1);
  }
  // Asks for the line at `p` in the exclusive state, ready to be written
  // (PREFETCHW). x86-64 compilers emit it for __builtin_prefetch(p, 1) only
  // when told the CPU has it, and CPUs without it treat the opcode as a
  // no-op.
  static void PrefetchForWrite(const std::byte* p) {
#if defined(__x86_64__)
    asm volatile("prefetchw %0" : : "m"(*p));
#else
    __builtin_prefetch(p, 1);
#endif
  }

  RingHeader* header_;
  std::byte* data_;
  uint64_t mask_;
  uint32_t max_payload_;
  uint64_t publish_bytes_;
  std::atomic<uint64_t>* committed_;
  uint64_t head_;            // committed head (the header's once published)
  uint64_t pending_head_;    // head after the pending reservation
  uint64_t published_head_;  // head as last stored in the header
  uint64_t unpublished_records_ = 0;
  uint64_t records_written_;  // private copies of the header's counters
  uint64_t bytes_written_;
  uint64_t cached_tail_ = 0;
};

// Publishes head up to `committed_head` (a value the ring's writer mirrored,
// see RingWriter) unless head is there already: head never goes back, and
// the writer's own stores are never undone.
void PublishCommitted(RingHeader* header, uint64_t committed_head);

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
  uint64_t cached_head_;
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
