#include "common/shm/ring.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>
#include <string>

namespace tprobe::shm {
namespace {

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

void InitRing(RingHeader* header) {
  new (header) RingHeader();
  header->head.store(0, std::memory_order_relaxed);
  header->tail.store(0, std::memory_order_relaxed);
  header->records_written.store(0, std::memory_order_relaxed);
  header->bytes_written.store(0, std::memory_order_relaxed);
  for (auto& d : header->dropped) d.store(0, std::memory_order_relaxed);
  header->owner_tid.store(0, std::memory_order_release);
}

RingWriter::RingWriter(RingHeader* header, std::span<std::byte> data,
                       std::atomic<uint64_t>* committed)
    : header_(header),
      data_(data.data()),
      mask_(data.size() - 1),
      // At most half the ring, so a record always fits once the ring drains,
      // whatever padding the wrap needs.
      max_payload_(
          static_cast<uint32_t>(data.size() / 2 - sizeof(RecordHeader))),
      publish_bytes_(std::min<uint64_t>(data.size() / 8, 64 * 1024)),
      committed_(committed),
      head_(header->head.load(std::memory_order_relaxed)),
      pending_head_(head_),
      published_head_(head_),
      records_written_(header->records_written.load(std::memory_order_relaxed)),
      bytes_written_(header->bytes_written.load(std::memory_order_relaxed)) {
  assert(IsPowerOfTwo(data.size()) && data.size() >= 64);
  if (committed_ != nullptr)
    committed_->store(head_, std::memory_order_release);
}

uint64_t RingWriter::FreeBytes() const {
  uint64_t tail = header_->tail.load(std::memory_order_acquire);
  return (mask_ + 1) - (head_ - tail);
}

std::byte* RingWriter::ReserveSlow(uint16_t type, uint32_t size) {
  assert(pending_head_ == head_ && "Reserve twice without Commit");
  if (size > max_payload_) return nullptr;
  const uint64_t capacity = mask_ + 1;
  const uint64_t need = AlignedRecordSize(size);
  const uint64_t pos = head_ & mask_;
  const uint64_t to_end = capacity - pos;
  const uint64_t padding = need > to_end ? to_end : 0;
  if (head_ + padding + need - cached_tail_ > capacity) {
    cached_tail_ = header_->tail.load(std::memory_order_acquire);
    if (head_ + padding + need - cached_tail_ > capacity) {
      Publish();  // the reader can only free what it sees
      return nullptr;
    }
  }
  if (padding != 0) {
    auto* pad = reinterpret_cast<RecordHeader*>(data_ + pos);
    pad->size = static_cast<uint32_t>(padding - sizeof(RecordHeader));
    pad->type = 0;
    pad->flags = 0;
  }
  return Place(head_ + padding, type, size, need);
}

void RingWriter::Publish() {
  if (head_ == published_head_) return;
  published_head_ = head_;
  unpublished_records_ = 0;
  header_->head.store(head_, std::memory_order_release);
}

void PublishCommitted(RingHeader* header, uint64_t committed_head) {
  uint64_t head = header->head.load(std::memory_order_relaxed);
  // Serial-number order: counters never wrap in practice, but compare as
  // the reader does.
  while (static_cast<int64_t>(committed_head - head) > 0 &&
         !header->head.compare_exchange_weak(head, committed_head,
                                             std::memory_order_release,
                                             std::memory_order_relaxed)) {
  }
}

uint64_t UnreadRecords(const RingHeader& header,
                       std::span<const std::byte> data) {
  const uint64_t capacity = data.size();
  uint64_t at = header.tail.load(std::memory_order_acquire);
  const uint64_t head = header.head.load(std::memory_order_acquire);
  if (head - at > capacity) return 0;  // not a state this producer wrote
  uint64_t records = 0;
  while (at != head) {
    const uint64_t pos = at & (capacity - 1);
    RecordHeader h;
    std::memcpy(&h, data.data() + pos, sizeof h);
    const uint64_t footprint = AlignedRecordSize(h.size);
    if (footprint > head - at || footprint > capacity - pos) break;
    if (h.type != 0) ++records;
    at += footprint;
  }
  return records;
}

RingReader::RingReader(RingHeader* header, std::span<std::byte> data)
    : header_(header),
      data_(data.data()),
      mask_(data.size() - 1),
      tail_(header->tail.load(std::memory_order_relaxed)),
      cached_head_(tail_) {  // a reader may start on a ring already used
  assert(IsPowerOfTwo(data.size()) && data.size() >= 64);
}

uint64_t RingReader::Backlog() const {
  return header_->head.load(std::memory_order_acquire) - tail_;
}

Result<std::optional<RecordView>> RingReader::Peek() {
  if (broken_) return Status::Error("ring is unusable after a corrupt record");
  const uint64_t capacity = mask_ + 1;
  for (;;) {
    if (cached_head_ == tail_) {
      cached_head_ = header_->head.load(std::memory_order_acquire);
      if (cached_head_ == tail_) return std::optional<RecordView>();
    }
    const uint64_t available = cached_head_ - tail_;
    const uint64_t pos = tail_ & mask_;
    // The starting tail comes from shared memory: a record header lies whole
    // inside the ring only at an aligned position.
    RecordHeader h{};
    const bool aligned = pos % kRecordAlign == 0;
    if (aligned) std::memcpy(&h, data_ + pos, sizeof h);
    const uint64_t footprint = AlignedRecordSize(h.size);
    if (!aligned || available > capacity || footprint > available ||
        footprint > capacity - pos) {
      broken_ = true;
      return Status::Error("corrupt ring record at byte " +
                           std::to_string(tail_) + " (size " +
                           std::to_string(h.size) + ")");
    }
    if (h.type == 0) {  // padding up to the ring's end
      tail_ += footprint;
      header_->tail.store(tail_, std::memory_order_release);
      continue;
    }
    peeked_end_ = tail_ + footprint;
    return std::optional<RecordView>(
        RecordView{h.type, std::span<const std::byte>(
                               data_ + pos + sizeof(RecordHeader), h.size)});
  }
}

void RingReader::Release() {
  assert(peeked_end_ != 0 && "Release without Peek");
  tail_ = peeked_end_;
  peeked_end_ = 0;
  header_->tail.store(tail_, std::memory_order_release);
}

}  // namespace tprobe::shm
