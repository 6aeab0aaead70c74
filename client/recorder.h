#ifndef TPROBE_CLIENT_RECORDER_H_
#define TPROBE_CLIENT_RECORDER_H_

// The Recorder, the client core: the hot path that turns hook events into ring
// records. Framework adapters (the C++ Client, the Python binding) sit on top
// of it.
//
// Hot-path contract (docs/architecture.md, section 2): reading the connection
// is one acquire load; when there is no daemon a write is one branch and a
// counter. Each producing thread owns one ring of the segment; names and stacks
// are interned per ring, so a record never refers to text sent on another ring.
//
// Thread safety: every method may be called from any thread; the ring writes
// of one thread go to that thread's ring.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/config.h"
#include "common/dtype.h"
#include "common/internal_api.h"
#include "common/record/record.h"
#include "common/record_losses.h"
#include "common/shm/ring.h"
#include "common/shm/segment.h"

namespace tprobe::client {

// One live registration with a daemon: the mapped segment and which rings
// threads have claimed. Never freed while the Recorder lives (retired ones are
// kept), so the hot path needs no reference counting.
//
// The segment's last ring is the boundary ring: no hook thread claims it;
// Recorder::WriteBoundary writes the rank's Start, Step and Goodbye into it.
struct Connection {
  explicit Connection(std::unique_ptr<shm::Segment> s);
  // One ring's committed head as its writer mirrors it (shm::RingWriter),
  // on a cache line of its own: the writer stores it at every record, and
  // other threads publish it (Recorder::PublishAll).
  struct alignas(shm::kCacheLine) Committed {
    std::atomic<uint64_t> head{0};
  };
  std::unique_ptr<shm::Segment> segment;
  std::unique_ptr<Committed[]> committed;  // one per ring
  const uint32_t data_rings;               // every ring but the last
  // The boundary ring's writer, once a boundary was written (guarded by
  // Recorder::boundary_mu_).
  std::optional<shm::RingWriter> boundary;
  // The boundary ring's tail when a wait for the daemon last timed out
  // (UINT64_MAX: none); guarded by Recorder::boundary_mu_.
  uint64_t boundary_stuck_tail = UINT64_MAX;
  uint64_t generation = 0;
  std::atomic<uint32_t> next_ring{0};
  // Its daemon went away (the socket hung up): what it left unread in the
  // rings is lost (RecordTotals::orphaned).
  std::atomic<bool> daemon_lost{false};
  // Step boundaries since the loss, and the unread records counted once no
  // hook can still be writing into the rings (two boundaries later), so
  // later steps do not walk them again. Guarded by Recorder::retired_mu_.
  int boundaries_since_lost = 0;
  std::optional<uint64_t> orphaned;
};

// Counts of this process's records since the Recorder was made, over every
// connection it had. Each record ends in exactly one place:
//   produced() = committed + dropped.Total()
// and `orphaned` is the part of `committed` a daemon that went away never
// read.
struct RecordTotals {
  uint64_t committed = 0;
  uint64_t orphaned = 0;
  RankLosses dropped;
  // The connection the hot path writes to now (0: none), and what its rings
  // received: their records_written, one per ring.
  uint64_t active_generation = 0;
  std::vector<uint64_t> active_rings;
  uint64_t produced() const { return committed + dropped.Total(); }
};

// Where a tensor whose statistics the producer computes went: its ring and
// the connection (Connection::generation) the ring belongs to.
struct RingSlot {
  uint32_t ring = 0;
  uint64_t generation = 0;
};

class TPROBE_INTERNAL Recorder {
 public:
  Recorder(config::FullRingPolicy policy, uint32_t block_timeout_ms);
  ~Recorder();

  // Called by the control channel. A segment attached while the current
  // step has already produced records (a daemon came back mid-step) is held
  // until StepBoundary, so that no step is written in part by a daemon that
  // missed its beginning; until then records count as no_daemon. A segment
  // attached at once gets the step's Start first (WriteStart). Detach
  // with `daemon_lost` when the daemon went away (not when the client
  // closes).
  void Attach(std::unique_ptr<shm::Segment> segment);
  void Detach(bool daemon_lost = false);
  // A step ended (or the rank says goodbye): `produced` is RecordTotals::
  // produced() at its end. A held segment becomes the one records go to, and
  // the step's Start is forgotten (WriteStart).
  void StepBoundary(uint64_t produced);
  // Whether records go to a daemon now.
  bool attached() const {
    return connection_.load(std::memory_order_acquire) != nullptr;
  }
  // Whether a daemon is connected, even if its segment is held.
  bool connected() const {
    return attached() || held_.load(std::memory_order_acquire);
  }
  // Makes every record committed so far, by any thread, visible to the
  // daemon (ring heads are published in batches, common/shm/ring.h). Call
  // it before a request that needs the daemon to have seen the records;
  // Totals() does it for the records it counts.
  void PublishAll();
  // Publishes the trainer's current step in the segment (SegmentHeader::
  // producer_step), for the daemon's messages.
  void PublishStep(uint32_t step) {
    Connection* c = connection_.load(std::memory_order_acquire);
    if (c == nullptr) return;
    std::atomic_ref<uint32_t>(c->segment->header()->producer_step)
        .store(step, std::memory_order_relaxed);
  }
  // The daemon's live capture directive (common/shm/directive.h); 0 (follow
  // the config) when no daemon is attached.
  uint64_t directive() const {
    Connection* c = connection_.load(std::memory_order_acquire);
    if (c == nullptr) return 0;
    return std::atomic_ref<uint64_t>(c->segment->header()->directive)
        .load(std::memory_order_acquire);
  }
  // The daemon's config generation (SegmentHeader::config_generation): it
  // changes when `tprobe configure` offers a new config. 0 when no daemon is
  // attached.
  uint64_t config_generation() const {
    Connection* c = connection_.load(std::memory_order_acquire);
    if (c == nullptr) return 0;
    return std::atomic_ref<uint64_t>(c->segment->header()->config_generation)
        .load(std::memory_order_acquire);
  }

  // A step boundary or the goodbye (a serialized v1::Request: Start, Step
  // or Goodbye) into the boundary ring of the daemon attached now, in order
  // after every record committed before the call: the one road a boundary
  // takes to the daemon. A Step's `step` is kept until the daemon has read
  // the record (BoundaryAcknowledged). It waits up to `wait_ms` (policy
  // block's block_timeout_ms) while the daemon has not read kMaxStepsAhead
  // of the Steps written before it, so that a rank runs at most about that
  // many steps ahead of a slower daemon, then writes it anyway. When the
  // ring is full it waits up to `wait_ms` for room, then leaves the boundary
  // in the ring's backlog (kQueued), process memory that goes into the ring
  // first, in order, as soon as there is room: a full ring never swallows
  // a boundary and never reorders them. Past kMaxQueuedBoundaries in the
  // backlog (a daemon stopped for that many steps) a boundary is refused
  // (kNoRoom). Without a daemon (kNoDaemon) a boundary is not sent at all:
  // its step belongs to the outage, which the ledger of the next Step
  // reports (step_ledger.h).
  static constexpr size_t kMaxStepsAhead = 256;
  static constexpr size_t kMaxQueuedBoundaries = size_t{1} << 20;
  enum class BoundaryWrite { kWritten, kQueued, kNoRoom, kNoDaemon };
  BoundaryWrite WriteBoundary(std::string_view request, uint32_t wait_ms,
                              std::optional<uint32_t> step = std::nullopt);
  // A Start, as WriteBoundary, kept as the Start of the step in progress
  // until StepBoundary: a daemon attached later in the step, before the
  // step produced a record (Attach does not hold it), gets it first in its
  // boundary ring, so that the step it wholly receives has its tree, and a
  // Start made while no daemon was reachable is never lost nor sent to a
  // daemon that missed the step's records.
  BoundaryWrite WriteStart(std::string_view request, uint32_t wait_ms);
  // The last step whose Step record the daemon read, having written the
  // step (it releases a boundary once it ran it); -1 when none.
  int64_t BoundaryAcknowledged();
  // Writes the backlog as room comes and waits until the attached daemon
  // has read every boundary (the goodbye last: it then wrote the rank's
  // trees), the daemon went away, or `deadline`. Returns whether it read
  // them.
  bool WaitBoundariesRead(std::chrono::steady_clock::time_point deadline);

  // Returns the id of `text` on this thread's ring, sending it on first use;
  // 0 when it could not be sent (then the record that needs it is dropped).
  uint32_t Intern(record::InternKind kind, std::string_view text) noexcept;
  // A token that names this thread's ring and its intern tables (0: no
  // ring): an id Intern returned stays valid on this thread while the token
  // is the same, so a caller may keep it instead of interning the text
  // again. Tokens are never reused in the process.
  uint64_t InternToken() noexcept;

  // Construct nesting. Returns false when dropped.
  bool WriteCall(bool begin, uint32_t step, uint32_t name_id,
                 record::CallKind kind, record::Direction direction);

  // A tensor and its bytes in chunks. ref is the value the entry's value tree
  // uses. Returns false when any part was dropped.
  bool WriteTensor(uint32_t ref, DType dtype, std::span<const int64_t> shape,
                   bool requires_grad, const void* data, size_t nbytes);

  // A tensor whose statistics the producer computes (tprobe.statistics_on):
  // its Tensor record with record::kTensorStatsByProducer and no chunks,
  // and with record::kTensorBytesByProducer when `bytes_follow` (its bytes
  // come later, WriteProducerBytes). Returns this thread's ring, or nullopt
  // when it was dropped (then no ProducerStats may follow).
  std::optional<RingSlot> WriteTensorAwaitingStats(
      uint32_t ref, DType dtype, std::span<const int64_t> shape,
      bool requires_grad, size_t nbytes, bool bytes_follow = false) noexcept;
  // The ProducerStats record that completes the tensor WriteTensorAwaiting-
  // Stats wrote on `slot` (stats.ring is set from it), on this thread's
  // ring: the producer's statistics thread calls it. Returns false when it
  // was dropped, or when the tensor's connection is gone.
  bool WriteProducerStats(const RingSlot& slot,
                          const record::ProducerStatsRecord& stats) noexcept;
  // The bytes of the tensor WriteTensorAwaitingStats wrote on `slot` with
  // bytes_follow, as WriteProducerStats: a ProducerBytes record, then the
  // bytes in chunks, on this thread's ring. Returns false when any part was
  // dropped (the daemon then writes the tensor incomplete).
  bool WriteProducerBytes(const RingSlot& slot, uint32_t ref, uint32_t step,
                          const void* data, size_t nbytes) noexcept;
  // The entry that closes the tensors written before it. Its body (a value
  // stream, common/record/record.h) is `pieces` one after another, copied
  // straight into the reserved ring space.
  bool WriteEntry(uint32_t step, uint32_t name_id, uint32_t stack_id,
                  std::span<const std::string_view> pieces);

  // Counters since the Recorder was made (see ClientCounters); every record
  // counted as committed is published first, so a ring cut taken from them
  // (StepLedger) is one the daemon can reach. Records left
  // unread by a daemon that went away count as dropped_no_daemon, not as
  // written.
  uint64_t dropped_no_daemon() const noexcept;
  uint64_t records_written() const noexcept;
  uint64_t dropped(shm::DropReason reason) const noexcept;
  // Every drop count at once, no_daemon as dropped_no_daemon().
  RankLosses Dropped() const;
  RecordTotals Totals() const;

 private:
  struct ThreadRing;
  // This thread's ring of the current connection, claimed here when it is
  // not yet; nullptr without one.
  ThreadRing* RingForThisThread();
  // The order of entries and calls across rings, which the daemon merges
  // by it: strictly increasing on each thread, and above every seq the
  // thread can have seen from another (a Lamport clock), without a locked
  // read-modify-write. Calls of threads that run at the same time may share
  // a value (the daemon then takes the lower ring first), and a thread that
  // stores a stale clock may order a racing third thread's call early: only
  // the interleaving of concurrent threads' records depends on it, never a
  // ring's own order.
  uint64_t NextSeq(ThreadRing* ring);
  // Makes `ring` this thread's ring of `conn` (claims one, if any is left).
  void ClaimRing(ThreadRing* ring, Connection* conn);
  // Reserves `size` bytes on `ring` under the full-ring policy; nullptr and a
  // counted drop when it cannot. ReserveSlow: when the ring has no room, the
  // record is too large or the thread has no ring.
  std::byte* Reserve(ThreadRing* ring, record::RecordType type, uint32_t size);
  std::byte* ReserveSlow(ThreadRing* ring, record::RecordType type,
                         uint32_t size);
  // Reserves, on this thread's ring (set in `ring`), a record that
  // completes a tensor written on `slot`; nullptr when it was dropped or
  // the tensor's segment is gone.
  std::byte* ReserveForSlot(const RingSlot& slot, record::RecordType type,
                            uint32_t size, ThreadRing*& ring);
  // The Chunk records of tensor `ref`'s `nbytes` bytes at `data`; false
  // when one was dropped (the rest are not written).
  bool WriteChunks(ThreadRing* ring, uint32_t ref, const void* data,
                   size_t nbytes);
  void CountNoDaemon() {
    dropped_no_daemon_.fetch_add(1, std::memory_order_relaxed);
  }

  const config::FullRingPolicy policy_;
  const uint32_t block_timeout_ms_;
  std::atomic<Connection*> connection_{nullptr};
  std::atomic<uint64_t> seq_{0};  // the newest seq given (NextSeq)
  std::atomic<uint64_t> dropped_no_daemon_{0};
  std::atomic<uint32_t> next_intern_id_{1};
  RecordTotals TotalsLocked() const;  // REQUIRES: retired_mu_ held
  // Publishes every ring of `conn` up to what its writers committed.
  static void PublishConnection(const Connection& conn);

  // Process memory only, never on the hot path; guards connections_,
  // held_connection_ and produced_at_boundary_. Taken after boundary_mu_.
  mutable std::mutex retired_mu_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::unique_ptr<Connection> held_connection_;
  std::atomic<bool> held_{false};
  uint64_t produced_at_boundary_ = 0;

  // Serialises the boundary writers (the threads that end steps and say
  // goodbye, and Attach) and guards Connection::boundary, acks_, the
  // backlog and start_.
  std::mutex boundary_mu_;
  // Step records written and not yet known read: their connection, the
  // boundary ring's head after them, and their step.
  struct PendingAck {
    const Connection* connection;
    uint64_t end;
    uint32_t step;
  };
  std::deque<PendingAck> acks_;
  int64_t acknowledged_ = -1;
  // Forgets the acks_ the daemon has read. REQUIRES: boundary_mu_ held.
  void PopAcknowledged();
  // The boundary ring's backlog: boundaries the ring of `queued_for_` had
  // no room for, oldest first.
  struct QueuedBoundary {
    std::string request;
    std::optional<uint32_t> step;
  };
  std::deque<QueuedBoundary> queued_;
  const Connection* queued_for_ = nullptr;
  // The Start of the step in progress (WriteStart); empty when none.
  std::string start_;
  // WriteBoundary, keeping the request as start_ when `start`.
  BoundaryWrite Write(std::string_view request, uint32_t wait_ms,
                      std::optional<uint32_t> step, bool start);
  // c's boundary ring writer, made on first use; a backlog left for another
  // connection is dropped (a daemon that went away left it to the outage).
  // REQUIRES: boundary_mu_ held.
  shm::RingWriter& BoundaryRing(Connection* c);
  // Writes the backlog, then `request`, into c's ring, waiting up to
  // `wait_ms` while the daemon has not read kMaxStepsAhead Steps (a Step)
  // or the ring has no room. False when it still has no room.
  // REQUIRES: boundary_mu_ held.
  bool PutWaiting(Connection* c, std::string_view request,
                  std::optional<uint32_t> step, uint32_t wait_ms);
  // Writes the backlog into c's ring while it has room; true when none is
  // left. REQUIRES: boundary_mu_ held.
  bool WriteQueued(Connection* c);
  // Publishes every data record committed so far, then Append. REQUIRES:
  // boundary_mu_ held, retired_mu_ not held.
  bool Put(Connection* c, std::string_view request,
           std::optional<uint32_t> step);
  // Writes one boundary into c's ring; false when it has no room.
  // REQUIRES: boundary_mu_ held.
  bool Append(Connection* c, std::string_view request,
              std::optional<uint32_t> step);
};

// True in a child forked from a process that uses tprobe: such a child never
// writes into its parent's rings.
TPROBE_INTERNAL bool InForkedChild() noexcept;

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_RECORDER_H_
