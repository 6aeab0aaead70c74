#include "client/recorder.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "client/exception_boundary.h"
#include "client/naming.h"
#include "client/thread_slot.h"
#include "common/record/writer.h"
#include "common/shm/ring.h"

namespace tprobe::client {
namespace {

std::atomic<bool> g_forked_child{false};

void MarkForkedChild() { g_forked_child.store(true); }

std::once_flag g_atfork_once;

// Connection generations are unique in the process, so a thread's cached
// ring never outlives its connection even when a new Recorder or Connection
// reuses an old address.
std::atomic<uint64_t> g_next_generation{1};

// Intern tokens are unique in the process: one per ring claim (InternToken).
std::atomic<uint64_t> g_next_intern_token{1};

}  // namespace

bool InForkedChild() noexcept {
  return g_forked_child.load(std::memory_order_relaxed);
}

// This thread's ring of the current connection and its intern tables.
struct Recorder::ThreadRing {
  const Recorder* core = nullptr;
  uint64_t generation = 0;
  uint64_t intern_token = 0;  // names this claim's intern tables
  Connection* connection = nullptr;
  std::optional<shm::RingWriter> writer;  // empty: no ring left to claim
  uint32_t index = 0;                     // the ring's index, with a writer
  // The ring's tail when a blocking wait last timed out: while the daemon
  // has not moved it, the next full ring drops at once instead of waiting
  // again, so a stopped daemon costs one block_timeout_ms, not one per
  // record.
  uint64_t stuck_tail = UINT64_MAX;
  // By string_view: a hit allocates nothing.
  TextMap<uint32_t> interned[2];
  // The seq this thread last gave (NextSeq), kept across claims: the
  // thread's records stay in order whatever the other threads do.
  uint64_t last_seq = 0;
};

Connection::Connection(std::unique_ptr<shm::Segment> s)
    : segment(std::move(s)),
      committed(std::make_unique<Committed[]>(segment->ring_count())),
      data_rings(segment->ring_count() - 1) {}

Recorder::Recorder(config::FullRingPolicy policy, uint32_t block_timeout_ms)
    : policy_(policy), block_timeout_ms_(block_timeout_ms) {
  std::call_once(g_atfork_once,
                 [] { pthread_atfork(nullptr, nullptr, MarkForkedChild); });
}

Recorder::~Recorder() { Detach(); }

void Recorder::Attach(std::unique_ptr<shm::Segment> segment) {
  auto conn = std::make_unique<Connection>(std::move(segment));
  conn->generation = g_next_generation.fetch_add(1);
  std::lock_guard boundary(boundary_mu_);
  std::lock_guard lock(retired_mu_);
  if (TotalsLocked().produced() != produced_at_boundary_) {
    held_connection_ = std::move(conn);
    held_.store(true, std::memory_order_release);
    return;
  }
  // The step in progress is wholly this daemon's: its Start goes first, and
  // no record of the connection can be before it (no hook sees it yet).
  if (!start_.empty()) (void)Append(conn.get(), start_, std::nullopt);
  connection_.store(conn.get(), std::memory_order_release);
  connections_.push_back(std::move(conn));
}

void Recorder::Detach(bool daemon_lost) {
  std::lock_guard lock(retired_mu_);
  if (Connection* c = connection_.load(std::memory_order_acquire)) {
    if (daemon_lost) c->daemon_lost.store(true, std::memory_order_release);
  }
  connection_.store(nullptr, std::memory_order_release);
  held_connection_.reset();
  held_.store(false, std::memory_order_release);
}

void Recorder::StepBoundary(uint64_t produced) {
  std::lock_guard boundary(boundary_mu_);
  start_.clear();
  std::lock_guard lock(retired_mu_);
  produced_at_boundary_ = produced;
  for (const auto& conn : connections_) {
    if (!conn->daemon_lost.load(std::memory_order_acquire) || conn->orphaned) {
      continue;
    }
    if (++conn->boundaries_since_lost >= 2) {
      PublishConnection(*conn);
      uint64_t unread = 0;
      for (uint32_t i = 0; i < conn->data_rings; ++i) {
        unread += shm::UnreadRecords(*conn->segment->ring_header(i),
                                     conn->segment->ring_data(i));
      }
      conn->orphaned = unread;
    }
  }
  if (held_connection_) {
    connection_.store(held_connection_.get(), std::memory_order_release);
    connections_.push_back(std::move(held_connection_));
    held_.store(false, std::memory_order_release);
  }
}

Recorder::ThreadRing* Recorder::RingForThisThread() {
  Connection* conn = connection_.load(std::memory_order_acquire);
  if (conn == nullptr || g_forked_child.load(std::memory_order_relaxed)) {
    return nullptr;
  }
  ThreadRing* ring = ThreadSlot<ThreadRing>::Get();
  if (ring == nullptr) return nullptr;
  if (ring->core != this || ring->connection != conn ||
      ring->generation != conn->generation) [[unlikely]] {
    ClaimRing(ring, conn);
  }
  return ring;
}

void Recorder::ClaimRing(ThreadRing* ring, Connection* conn) {
  ring->core = this;
  ring->connection = conn;
  ring->generation = conn->generation;
  ring->intern_token =
      g_next_intern_token.fetch_add(1, std::memory_order_relaxed);
  ring->writer.reset();
  ring->stuck_tail = UINT64_MAX;
  ring->interned[0].clear();
  ring->interned[1].clear();
  const uint32_t index =
      conn->next_ring.fetch_add(1, std::memory_order_relaxed);
  shm::Segment& seg = *conn->segment;
  if (index < conn->data_rings) {
    ring->index = index;
    shm::RingHeader* h = seg.ring_header(index);
    h->owner_tid.store(static_cast<uint32_t>(::syscall(SYS_gettid)),
                       std::memory_order_relaxed);
    ring->writer.emplace(h, seg.ring_data(index), &conn->committed[index].head);
  }
}

std::byte* Recorder::Reserve(ThreadRing* ring, record::RecordType type,
                             uint32_t size) {
  if (ring->writer) [[likely]] {
    if (std::byte* p =
            ring->writer->Reserve(static_cast<uint16_t>(type), size)) {
      return p;
    }
  }
  return ReserveSlow(ring, type, size);
}

std::byte* Recorder::ReserveSlow(ThreadRing* ring, record::RecordType type,
                                 uint32_t size) {
  if (!ring->writer) {
    // More producing threads than rings: count against ring 0.
    ring->connection->segment->ring_header(0)
        ->dropped[static_cast<size_t>(shm::DropReason::kRingFull)]
        .fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  shm::RingWriter& w = *ring->writer;
  if (size > w.MaxPayload()) {
    w.header()
        ->dropped[static_cast<size_t>(shm::DropReason::kTooLarge)]
        .fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  // Reserve (the caller) found no room.
  auto type_raw = static_cast<uint16_t>(type);
  const uint64_t tail = w.header()->tail.load(std::memory_order_acquire);
  if (policy_ == config::FullRingPolicy::kBlock && tail != ring->stuck_tail) {
    ring->stuck_tail = UINT64_MAX;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(block_timeout_ms_);
    while (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
      if (std::byte* p = w.Reserve(type_raw, size)) return p;
      if (!attached()) break;  // the daemon went away while we waited
    }
    ring->stuck_tail = w.header()->tail.load(std::memory_order_acquire);
  }
  w.header()
      ->dropped[static_cast<size_t>(shm::DropReason::kRingFull)]
      .fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

uint64_t Recorder::NextSeq(ThreadRing* ring) {
  const uint64_t seq =
      std::max(ring->last_seq, seq_.load(std::memory_order_relaxed)) + 1;
  seq_.store(seq, std::memory_order_relaxed);
  ring->last_seq = seq;
  return seq;
}

uint32_t Recorder::Intern(record::InternKind kind,
                          std::string_view text) noexcept try {
  ThreadRing* ring = RingForThisThread();
  if (ring == nullptr) {
    CountNoDaemon();
    return 0;
  }
  auto& table = ring->interned[static_cast<int>(kind)];
  if (auto it = table.find(text); it != table.end()) {
    return it->second;
  }
  const uint32_t id = next_intern_id_.fetch_add(1, std::memory_order_relaxed);
  std::byte* p =
      Reserve(ring, record::RecordType::kIntern, record::InternSize(text));
  if (p == nullptr) return 0;
  record::PutIntern(p, id, kind, text);
  ring->writer->Commit();
  table.emplace(std::string(text), id);
  return id;
} catch (...) {
  NoteStopped("Recorder::Intern");
  return 0;
}

uint64_t Recorder::InternToken() noexcept {
  ThreadRing* ring = RingForThisThread();
  return ring != nullptr ? ring->intern_token : 0;
}

bool Recorder::WriteCall(bool begin, uint32_t step, uint32_t name_id,
                         record::CallKind kind, record::Direction direction) {
  ThreadRing* ring = RingForThisThread();
  if (ring == nullptr) {
    CountNoDaemon();
    return false;
  }
  if (name_id == 0) return false;
  auto type =
      begin ? record::RecordType::kCallBegin : record::RecordType::kCallEnd;
  std::byte* p = Reserve(ring, type, record::kCallSize);
  if (p == nullptr) return false;
  record::PutCall(p, NextSeq(ring), step, name_id, kind, direction);
  ring->writer->Commit();
  return true;
}

bool Recorder::WriteTensor(uint32_t ref, DType dtype,
                           std::span<const int64_t> shape, bool requires_grad,
                           const void* data, size_t nbytes) {
  ThreadRing* ring = RingForThisThread();
  if (ring == nullptr) {
    CountNoDaemon();
    return false;
  }
  if (shape.size() > record::kMaxDims) return false;
  std::byte* p = Reserve(ring, record::RecordType::kTensor,
                         record::TensorSize(shape.size()));
  if (p == nullptr) return false;
  record::PutTensor(p, ref, dtype, shape, requires_grad, nbytes);
  ring->writer->Commit();
  return WriteChunks(ring, ref, data, nbytes);
}

bool Recorder::WriteChunks(ThreadRing* ring, uint32_t ref, const void* data,
                           size_t nbytes) {
  // The payload streams in chunks of at most half the ring.
  const size_t max_chunk =
      ring->writer->MaxPayload() - sizeof(record::ChunkRecord);
  const auto* bytes = static_cast<const std::byte*>(data);
  for (size_t offset = 0; offset < nbytes;) {
    const size_t n = std::min(max_chunk, nbytes - offset);
    std::byte* c =
        Reserve(ring, record::RecordType::kChunk, record::ChunkSize(n));
    if (c == nullptr) return false;  // the daemon sees an incomplete tensor
    record::PutChunkHeader(c, ref, offset);
    std::memcpy(c + sizeof(record::ChunkRecord), bytes + offset, n);
    ring->writer->Commit();
    offset += n;
  }
  return true;
}

std::optional<RingSlot> Recorder::WriteTensorAwaitingStats(
    uint32_t ref, DType dtype, std::span<const int64_t> shape,
    bool requires_grad, size_t nbytes, bool bytes_follow) noexcept try {
  ThreadRing* ring = RingForThisThread();
  if (ring == nullptr) {
    CountNoDaemon();
    return std::nullopt;
  }
  if (shape.size() > record::kMaxDims) return std::nullopt;
  std::byte* p = Reserve(ring, record::RecordType::kTensor,
                         record::TensorSize(shape.size()));
  if (p == nullptr) return std::nullopt;
  record::PutTensor(p, ref, dtype, shape, requires_grad, nbytes,
                    record::kTensorStatsByProducer |
                        (bytes_follow ? record::kTensorBytesByProducer : 0));
  ring->writer->Commit();
  return RingSlot{ring->index, ring->generation};
} catch (...) {
  NoteStopped("Recorder::WriteTensorAwaitingStats");
  return std::nullopt;
}

std::byte* Recorder::ReserveForSlot(const RingSlot& slot,
                                    record::RecordType type, uint32_t size,
                                    ThreadRing*& ring) {
  ring = RingForThisThread();
  if (ring == nullptr) {
    CountNoDaemon();
    return nullptr;
  }
  // The tensor went to a segment the daemon no longer reads.
  if (slot.generation != ring->generation) return nullptr;
  return Reserve(ring, type, size);
}

bool Recorder::WriteProducerStats(
    const RingSlot& slot, const record::ProducerStatsRecord& stats) noexcept
    try {
  ThreadRing* ring;
  std::byte* p = ReserveForSlot(slot, record::RecordType::kProducerStats,
                                record::kProducerStatsSize, ring);
  if (p == nullptr) return false;
  record::ProducerStatsRecord r = stats;
  r.ring = slot.ring;
  record::PutProducerStats(p, r);
  ring->writer->Commit();
  return true;
} catch (...) {
  NoteStopped("Recorder::WriteProducerStats");
  return false;
}

bool Recorder::WriteProducerBytes(const RingSlot& slot, uint32_t ref,
                                  uint32_t step, const void* data,
                                  size_t nbytes) noexcept try {
  ThreadRing* ring;
  std::byte* p = ReserveForSlot(slot, record::RecordType::kProducerBytes,
                                record::kProducerBytesSize, ring);
  if (p == nullptr) return false;
  record::ProducerBytesRecord r{};
  r.ring = slot.ring;
  r.ref = ref;
  r.step = step;
  r.nbytes = nbytes;
  record::PutProducerBytes(p, r);
  ring->writer->Commit();
  return WriteChunks(ring, ref, data, nbytes);
} catch (...) {
  NoteStopped("Recorder::WriteProducerBytes");
  return false;
}

bool Recorder::WriteEntry(uint32_t step, uint32_t name_id, uint32_t stack_id,
                          std::span<const std::string_view> pieces) {
  ThreadRing* ring = RingForThisThread();
  if (ring == nullptr) {
    CountNoDaemon();
    return false;
  }
  if (name_id == 0) return false;
  size_t body = 0;
  for (std::string_view piece : pieces) body += piece.size();
  if (body > UINT32_MAX - sizeof(record::EntryRecord)) return false;
  std::byte* p =
      Reserve(ring, record::RecordType::kEntry, record::EntrySize(body));
  if (p == nullptr) return false;
  record::PutEntryHeader(p, NextSeq(ring), step, name_id, stack_id);
  p += sizeof(record::EntryRecord);
  for (std::string_view piece : pieces) {
    if (!piece.empty()) std::memcpy(p, piece.data(), piece.size());
    p += piece.size();
  }
  ring->writer->Commit();
  return true;
}

Recorder::BoundaryWrite Recorder::WriteBoundary(std::string_view request,
                                                uint32_t wait_ms,
                                                std::optional<uint32_t> step) {
  return Write(request, wait_ms, step, /*start=*/false);
}

Recorder::BoundaryWrite Recorder::WriteStart(std::string_view request,
                                             uint32_t wait_ms) {
  return Write(request, wait_ms, std::nullopt, /*start=*/true);
}

Recorder::BoundaryWrite Recorder::Write(std::string_view request,
                                        uint32_t wait_ms,
                                        std::optional<uint32_t> step,
                                        bool start) {
  std::lock_guard lock(boundary_mu_);
  if (request.empty() || request.size() > record::kMaxBoundaryBytes) {
    return BoundaryWrite::kNoRoom;
  }
  // Kept before the check: a daemon that attaches after it gets it.
  if (start) start_ = request;
  Connection* c = connection_.load(std::memory_order_acquire);
  if (c == nullptr || g_forked_child.load(std::memory_order_relaxed)) {
    return BoundaryWrite::kNoDaemon;
  }
  if (PutWaiting(c, request, step, wait_ms)) return BoundaryWrite::kWritten;
  if (queued_.size() >= kMaxQueuedBoundaries) return BoundaryWrite::kNoRoom;
  queued_.push_back(QueuedBoundary{std::string(request), step});
  return BoundaryWrite::kQueued;
}

shm::RingWriter& Recorder::BoundaryRing(Connection* c) {
  const uint32_t last = c->data_rings;
  if (!c->boundary) {
    c->boundary.emplace(c->segment->ring_header(last),
                        c->segment->ring_data(last), &c->committed[last].head);
  }
  if (queued_for_ != c) {
    queued_.clear();
    queued_for_ = c;
  }
  return *c->boundary;
}

bool Recorder::PutWaiting(Connection* c, std::string_view request,
                          std::optional<uint32_t> step, uint32_t wait_ms) {
  shm::RingWriter& w = BoundaryRing(c);
  // A daemon that did not move since a wait timed out (it is stopped) costs
  // one wait, not one per step, as a data ring's (ThreadRing::stuck_tail).
  const bool stuck = w.header()->tail.load(std::memory_order_acquire) ==
                     c->boundary_stuck_tail;
  if (stuck) wait_ms = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  bool timed_out = false;
  auto wait = [&] {
    if (std::chrono::steady_clock::now() >= deadline || !attached()) {
      timed_out = wait_ms != 0;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    return true;
  };
  // Steps ahead of the daemon: the rank waits for it as for a full ring.
  PopAcknowledged();
  while (step && acks_.size() >= kMaxStepsAhead && wait()) PopAcknowledged();
  bool written = WriteQueued(c) && Put(c, request, step);
  while (!written && wait()) written = WriteQueued(c) && Put(c, request, step);
  if (timed_out) {
    c->boundary_stuck_tail = w.header()->tail.load(std::memory_order_acquire);
  } else if (!stuck) {
    c->boundary_stuck_tail = UINT64_MAX;
  }
  return written;
}

bool Recorder::WriteQueued(Connection* c) {
  while (!queued_.empty()) {
    if (!Put(c, queued_.front().request, queued_.front().step)) return false;
    queued_.pop_front();
  }
  return true;
}

bool Recorder::Put(Connection* c, std::string_view request,
                   std::optional<uint32_t> step) {
  // Every data record committed so far goes before the boundary.
  PublishAll();
  return Append(c, request, step);
}

bool Recorder::Append(Connection* c, std::string_view request,
                      std::optional<uint32_t> step) {
  shm::RingWriter& w = BoundaryRing(c);
  std::byte* p = w.Reserve(static_cast<uint16_t>(record::RecordType::kBoundary),
                           static_cast<uint32_t>(request.size()));
  if (p == nullptr) return false;
  std::memcpy(p, request.data(), request.size());
  w.Commit();
  w.Publish();
  if (step) acks_.push_back(PendingAck{c, w.committed_head(), *step});
  return true;
}

int64_t Recorder::BoundaryAcknowledged() {
  std::lock_guard lock(boundary_mu_);
  PopAcknowledged();
  return acknowledged_;
}

void Recorder::PopAcknowledged() {
  const Connection* active = connection_.load(std::memory_order_acquire);
  while (!acks_.empty()) {
    const PendingAck& ack = acks_.front();
    const uint64_t tail =
        ack.connection->segment->ring_header(ack.connection->data_rings)
            ->tail.load(std::memory_order_acquire);
    if (static_cast<int64_t>(tail - ack.end) >= 0) {
      acknowledged_ = ack.step;
    } else if (ack.connection == active) {
      break;
    }
    // Read, or left unread by a daemon that went away: no longer awaited
    // (the session counts the latter into an outage).
    acks_.pop_front();
  }
}

bool Recorder::WaitBoundariesRead(
    std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    {
      std::lock_guard lock(boundary_mu_);
      Connection* c = connection_.load(std::memory_order_acquire);
      if (c == nullptr || !c->boundary) return false;
      if (queued_for_ != c || WriteQueued(c)) {
        const uint64_t tail = c->segment->ring_header(c->data_rings)
                                  ->tail.load(std::memory_order_acquire);
        if (static_cast<int64_t>(tail - c->boundary->committed_head()) >= 0) {
          return true;
        }
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void Recorder::PublishConnection(const Connection& conn) {
  for (uint32_t i = 0; i < conn.segment->ring_count(); ++i) {
    shm::PublishCommitted(
        conn.segment->ring_header(i),
        conn.committed[i].head.load(std::memory_order_acquire));
  }
}

void Recorder::PublishAll() {
  std::lock_guard lock(retired_mu_);
  for (const auto& conn : connections_) PublishConnection(*conn);
}

RecordTotals Recorder::TotalsLocked() const {
  RecordTotals t;
  t.dropped.no_daemon = dropped_no_daemon_.load(std::memory_order_relaxed);
  Connection* active = connection_.load(std::memory_order_acquire);
  for (const auto& conn : connections_) {
    const shm::Segment& seg = *conn->segment;
    const bool lost = conn->daemon_lost.load(std::memory_order_acquire);
    if (conn.get() == active) t.active_generation = conn->generation;
    for (uint32_t i = 0; i < conn->data_rings; ++i) {
      const shm::RingHeader* h = seg.ring_header(i);
      const uint64_t records =
          h->records_written.load(std::memory_order_acquire);
      // After the count: the mirror then holds at least these records.
      shm::PublishCommitted(seg.ring_header(i), conn->committed[i].head.load(
                                                    std::memory_order_acquire));
      t.committed += records;
      const RingLosses drops = RingLossesOf(*h);
      t.dropped.ring_full += drops.ring_full;
      t.dropped.too_large += drops.too_large;
      if (lost && !conn->orphaned) {
        t.orphaned += shm::UnreadRecords(*h, seg.ring_data(i));
      }
      if (conn.get() == active) t.active_rings.push_back(records);
    }
    if (conn->orphaned) t.orphaned += *conn->orphaned;
  }
  return t;
}

RecordTotals Recorder::Totals() const {
  std::lock_guard lock(retired_mu_);
  return TotalsLocked();
}

uint64_t Recorder::records_written() const noexcept try {
  const RecordTotals t = Totals();
  return t.committed - t.orphaned;
} catch (...) {
  NoteStopped("Recorder::records_written");
  return 0;
}

uint64_t Recorder::dropped_no_daemon() const noexcept try {
  const RecordTotals t = Totals();
  return t.dropped.no_daemon + t.orphaned;
} catch (...) {
  NoteStopped("Recorder::dropped_no_daemon");
  return 0;
}

RankLosses Recorder::Dropped() const {
  const RecordTotals t = Totals();
  RankLosses dropped = t.dropped;
  dropped.no_daemon += t.orphaned;
  return dropped;
}

uint64_t Recorder::dropped(shm::DropReason reason) const noexcept try {
  const RecordTotals t = Totals();
  return reason == shm::DropReason::kRingFull ? t.dropped.ring_full
                                              : t.dropped.too_large;
} catch (...) {
  NoteStopped("Recorder::dropped");
  return 0;
}

}  // namespace tprobe::client
