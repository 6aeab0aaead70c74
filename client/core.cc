#include "client/core.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <unordered_map>

#include "common/shm/ring.h"
#include "tprobe/v1/value.pb.h"

namespace tprobe::client {
namespace {

std::atomic<bool> g_forked_child{false};

void MarkForkedChild() { g_forked_child.store(true); }

std::once_flag g_atfork_once;

// Connection generations are unique in the process, so a thread's cached
// ring never outlives its connection even when a new Core or Connection
// reuses an old address.
std::atomic<uint64_t> g_next_generation{1};

}  // namespace

bool InForkedChild() { return g_forked_child.load(std::memory_order_relaxed); }

// Looks strings up by string_view, so a hit allocates nothing.
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>{}(s);
  }
};

// This thread's ring of the current connection and its intern tables.
struct Core::ThreadRing {
  const Core* core = nullptr;
  uint64_t generation = 0;
  Connection* connection = nullptr;
  std::optional<shm::RingWriter> writer;  // empty: no ring left to claim
  // The ring's tail when a blocking wait last timed out: while the daemon
  // has not moved it, the next full ring drops at once instead of waiting
  // again, so a stopped daemon costs one block_timeout_ms, not one per
  // record.
  uint64_t stuck_tail = UINT64_MAX;
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>>
      interned[2];
};

Core::Core(FullRingPolicy policy, uint32_t block_timeout_ms)
    : policy_(policy), block_timeout_ms_(block_timeout_ms) {
  std::call_once(g_atfork_once,
                 [] { pthread_atfork(nullptr, nullptr, MarkForkedChild); });
}

Core::~Core() { Detach(); }

void Core::Attach(std::unique_ptr<shm::Segment> segment) {
  auto conn = std::make_unique<Connection>();
  conn->segment = std::move(segment);
  conn->generation = g_next_generation.fetch_add(1);
  std::lock_guard lock(retired_mu_);
  if (TotalsLocked().produced() != produced_at_boundary_) {
    held_connection_ = std::move(conn);
    held_.store(true, std::memory_order_release);
    return;
  }
  connection_.store(conn.get(), std::memory_order_release);
  connections_.push_back(std::move(conn));
}

void Core::Detach(bool daemon_lost) {
  std::lock_guard lock(retired_mu_);
  if (Connection* c = connection_.load(std::memory_order_acquire)) {
    if (daemon_lost) c->daemon_lost.store(true, std::memory_order_release);
  }
  connection_.store(nullptr, std::memory_order_release);
  held_connection_.reset();
  held_.store(false, std::memory_order_release);
}

void Core::StepBoundary(uint64_t produced) {
  std::lock_guard lock(retired_mu_);
  produced_at_boundary_ = produced;
  for (const auto& conn : connections_) {
    if (!conn->daemon_lost.load(std::memory_order_acquire) || conn->orphaned) {
      continue;
    }
    if (++conn->boundaries_since_lost >= 2) {
      uint64_t unread = 0;
      for (uint32_t i = 0; i < conn->segment->ring_count(); ++i) {
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

Core::ThreadRing* Core::RingForThisThread() {
  Connection* conn = connection_.load(std::memory_order_acquire);
  if (conn == nullptr || InForkedChild()) return nullptr;
  thread_local ThreadRing ring;
  if (ring.core != this || ring.connection != conn ||
      ring.generation != conn->generation) {
    ring.core = this;
    ring.connection = conn;
    ring.generation = conn->generation;
    ring.writer.reset();
    ring.stuck_tail = UINT64_MAX;
    ring.interned[0].clear();
    ring.interned[1].clear();
    const uint32_t index =
        conn->next_ring.fetch_add(1, std::memory_order_relaxed);
    shm::Segment& seg = *conn->segment;
    if (index < seg.ring_count()) {
      shm::RingHeader* h = seg.ring_header(index);
      h->owner_tid.store(static_cast<uint32_t>(::syscall(SYS_gettid)),
                         std::memory_order_relaxed);
      ring.writer.emplace(h, seg.ring_data(index));
    }
  }
  return &ring;
}

std::byte* Core::Reserve(ThreadRing* ring, record::RecordType type,
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
  auto type_raw = static_cast<uint16_t>(type);
  if (std::byte* p = w.Reserve(type_raw, size)) return p;
  const uint64_t tail = w.header()->tail.load(std::memory_order_acquire);
  if (policy_ == FullRingPolicy::kBlock && tail != ring->stuck_tail) {
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

uint32_t Core::Intern(record::InternKind kind, std::string_view text) {
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
  std::byte* p = Reserve(ring, record::RecordType::kIntern,
                         sizeof(record::InternRecord) + text.size());
  if (p == nullptr) return 0;
  record::InternRecord r{};
  r.id = id;
  r.kind = static_cast<uint8_t>(kind);
  std::memcpy(p, &r, sizeof r);
  std::memcpy(p + sizeof r, text.data(), text.size());
  ring->writer->Commit();
  table.emplace(std::string(text), id);
  return id;
}

bool Core::WriteCall(bool begin, uint32_t step, uint32_t name_id,
                     record::CallKind kind, record::Direction direction) {
  ThreadRing* ring = RingForThisThread();
  if (ring == nullptr) {
    CountNoDaemon();
    return false;
  }
  if (name_id == 0) return false;
  auto type =
      begin ? record::RecordType::kCallBegin : record::RecordType::kCallEnd;
  std::byte* p = Reserve(ring, type, sizeof(record::CallRecord));
  if (p == nullptr) return false;
  record::CallRecord r{};
  r.seq = NextSeq();
  r.step = step;
  r.name_id = name_id;
  r.call_kind = static_cast<uint8_t>(kind);
  r.direction = static_cast<uint8_t>(direction);
  std::memcpy(p, &r, sizeof r);
  ring->writer->Commit();
  return true;
}

bool Core::WriteTensor(uint32_t ref, DType dtype,
                       std::span<const int64_t> shape, bool requires_grad,
                       const void* data, size_t nbytes) {
  ThreadRing* ring = RingForThisThread();
  if (ring == nullptr) {
    CountNoDaemon();
    return false;
  }
  if (shape.size() > record::kMaxDims) return false;
  const uint32_t meta_size = static_cast<uint32_t>(
      sizeof(record::TensorRecord) + shape.size() * sizeof(int64_t));
  std::byte* p = Reserve(ring, record::RecordType::kTensor, meta_size);
  if (p == nullptr) return false;
  record::TensorRecord r{};
  r.nbytes = nbytes;
  r.ref = ref;
  r.dtype = static_cast<uint8_t>(dtype);
  r.ndim = static_cast<uint8_t>(shape.size());
  r.requires_grad = requires_grad ? 1 : 0;
  std::memcpy(p, &r, sizeof r);
  if (!shape.empty()) {
    std::memcpy(p + sizeof r, shape.data(), shape.size() * sizeof(int64_t));
  }
  ring->writer->Commit();
  // The payload streams in chunks of at most half the ring.
  const size_t max_chunk =
      ring->writer->MaxPayload() - sizeof(record::ChunkRecord);
  const auto* bytes = static_cast<const std::byte*>(data);
  for (size_t offset = 0; offset < nbytes;) {
    const size_t n = std::min(max_chunk, nbytes - offset);
    std::byte* c =
        Reserve(ring, record::RecordType::kChunk,
                static_cast<uint32_t>(sizeof(record::ChunkRecord) + n));
    if (c == nullptr) return false;  // the daemon sees an incomplete tensor
    record::ChunkRecord chunk{};
    chunk.offset = offset;
    chunk.ref = ref;
    std::memcpy(c, &chunk, sizeof chunk);
    std::memcpy(c + sizeof chunk, bytes + offset, n);
    ring->writer->Commit();
    offset += n;
  }
  return true;
}

bool Core::WriteEntry(uint32_t step, uint32_t name_id, uint32_t stack_id,
                      const v1::Entry& entry) {
  ThreadRing* ring = RingForThisThread();
  if (ring == nullptr) {
    CountNoDaemon();
    return false;
  }
  if (name_id == 0) return false;
  const size_t body = entry.ByteSizeLong();
  std::byte* p =
      Reserve(ring, record::RecordType::kEntry,
              static_cast<uint32_t>(sizeof(record::EntryRecord) + body));
  if (p == nullptr) return false;
  record::EntryRecord r{};
  r.seq = NextSeq();
  r.step = step;
  r.name_id = name_id;
  r.stack_id = stack_id;
  std::memcpy(p, &r, sizeof r);
  entry.SerializeWithCachedSizesToArray(
      reinterpret_cast<uint8_t*>(p + sizeof r));
  ring->writer->Commit();
  return true;
}

RecordTotals Core::TotalsLocked() const {
  RecordTotals t;
  t.no_daemon = dropped_no_daemon_.load(std::memory_order_relaxed);
  Connection* active = connection_.load(std::memory_order_acquire);
  for (const auto& conn : connections_) {
    const shm::Segment& seg = *conn->segment;
    const bool lost = conn->daemon_lost.load(std::memory_order_acquire);
    if (conn.get() == active) t.active_generation = conn->generation;
    for (uint32_t i = 0; i < seg.ring_count(); ++i) {
      const shm::RingHeader* h = seg.ring_header(i);
      const uint64_t records =
          h->records_written.load(std::memory_order_acquire);
      t.committed += records;
      t.ring_full +=
          h->dropped[static_cast<size_t>(shm::DropReason::kRingFull)].load(
              std::memory_order_relaxed);
      t.too_large +=
          h->dropped[static_cast<size_t>(shm::DropReason::kTooLarge)].load(
              std::memory_order_relaxed);
      if (lost && !conn->orphaned) {
        t.orphaned += shm::UnreadRecords(*h, seg.ring_data(i));
      }
      if (conn.get() == active) t.active_rings.push_back(records);
    }
    if (conn->orphaned) t.orphaned += *conn->orphaned;
  }
  return t;
}

RecordTotals Core::Totals() const {
  std::lock_guard lock(retired_mu_);
  return TotalsLocked();
}

uint64_t Core::records_written() const {
  const RecordTotals t = Totals();
  return t.committed - t.orphaned;
}

uint64_t Core::dropped_no_daemon() const {
  const RecordTotals t = Totals();
  return t.no_daemon + t.orphaned;
}

uint64_t Core::dropped(shm::DropReason reason) const {
  const RecordTotals t = Totals();
  return reason == shm::DropReason::kRingFull ? t.ring_full : t.too_large;
}

}  // namespace tprobe::client
