#ifndef TPROBE_DAEMON_PRODUCER_H_
#define TPROBE_DAEMON_PRODUCER_H_

// One registered client process (a trainer rank): the shared-memory segment
// the daemon created for it, one RingReader per ring, and everything the
// daemon keeps about it in its own memory: the intern tables, the decode
// state of each ring and the open dump trees.
//
// Nothing here lives in shared memory. The segment holds only the rings; the
// mutex below is ordinary process memory.
//
// Control requests reach the state through the producer's command queue
// (Enqueue), never directly: the worker that holds the state runs them in
// order, each after draining what the producer had committed when the
// request arrived (rank_pipeline.h). So the control thread never waits on
// the data, and one rank's backlog never delays another rank.
//
// Thread safety: the identity accessors are immutable and may be called from
// any thread, as may Enqueue, Counters, Published and ProcessGone. The state
// is reached only through a Locked handle: a worker takes it with TryLock()
// (that is its claim on the producer), shutdown with Lock().

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/config/config.h"
#include "common/record/record.h"
#include "common/shm/ring.h"
#include "common/shm/segment.h"
#include "common/status.h"
#include "daemon/assembler.h"
#include "daemon/entry_renderer.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::daemon {

// A tensor whose Tensor record arrived and whose chunks are still coming.
struct PendingTensor {
  record::TensorRecord meta;
  TensorInfo info;  // dtype, shape, requires_grad
  std::vector<std::byte> bytes;
  bool broken = false;  // a chunk was out of order: never completes
  uint64_t record = 0;  // its Tensor record's index on the ring
};

// A closed tensor waiting for the Entry that refers to it. `record` (its
// Tensor record's index on the ring, as RingState::records_read counts)
// places it against the step cuts: once its step is settled no Entry can
// refer to it any more (drain.h ReleaseSettledTensors).
struct WaitingTensor {
  uint64_t record = 0;
  TensorInfo info;
};

// A module's construct.json node whose CallBegin was seen but which is not
// in its tree yet (drain.h says when it goes in).
struct HeldNode {
  uint32_t step;
  std::string name;
  std::optional<std::string> parent;
};

// Bounds on what one producer can make the daemon hold or do: shared memory
// is untrusted, so every size a client declares is capped here. Exceeding
// one marks the producer's stream corrupt (a tensor over max_tensor_bytes is
// only left incomplete).
struct ProducerLimits {
  // A tensor's declared nbytes; larger tensors get statistics null.
  uint64_t max_tensor_bytes = uint64_t{4} << 30;
  // Interned names and stacks of one producer: count and total text bytes.
  size_t max_interned = size_t{1} << 20;
  uint64_t max_interned_bytes = uint64_t{256} << 20;
  // Closed tensors of one ring waiting for their Entry (a module's inputs
  // wait while its children's entries go by; tensors no Entry refers to wait
  // until their step is settled), and their kept bytes (task tensor).
  size_t max_waiting_tensors = size_t{1} << 16;
  uint64_t max_waiting_bytes = uint64_t{16} << 30;
  // Open steps (trees) of one producer: the drain reads no record that
  // would open one more (drain.h), so a rank that runs ahead of its Step
  // commands fills its rings instead of the daemon's memory.
  size_t max_open_steps = 64;
  // ... and the bytes they may hold (Assembler::open_bytes) before the drain
  // opens no further one. A single step may exceed it: its own records are
  // always read.
  uint64_t max_open_bytes = uint64_t{1} << 30;
};

// Ring header counters the daemon saw last, to check they only grow.
struct SeenCounters {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t dropped[static_cast<size_t>(shm::DropReason::kCount)] = {};
};

// What the daemon remembers about one ring between records.
struct RingState {
  explicit RingState(shm::RingReader r) : reader(r) {}
  shm::RingReader reader;
  std::optional<PendingTensor> pending;
  // Closed tensors by ref, until the Entry that refers to them (or their
  // step is settled), and the bytes they keep.
  std::unordered_map<uint32_t, WaitingTensor> tensors;
  uint64_t waiting_bytes = 0;
  SeenCounters seen;
  // Records read from this ring (padding not counted), and how many of
  // them belonged to steps already settled (step_accounting.h).
  uint64_t records_read = 0;
  uint64_t records_settled = 0;
  // Module nodes whose CallBegin was seen and CallEnd not yet (innermost
  // last): the innermost one of its step is the parent of the next
  // construct node. Those still open when their step is finished are the
  // step's unclosed calls (drain.h CloseOpenCalls).
  struct OpenModule {
    uint32_t step;
    std::string name;
  };
  std::vector<OpenModule> open_modules;
  // Module nodes held back, in CallBegin order.
  std::vector<HeldNode> held_nodes;
};

// The producer's daemon-side state, guarded by the producer's mutex.
struct ProducerState {
  ProducerState(AssemblerOptions options, config::Config registered)
      : assembler(std::move(options)), config(std::move(registered)) {}
  std::vector<RingState> rings;
  std::unordered_map<uint32_t, std::string> names;  // InternKind::kName
  std::unordered_map<uint32_t, std::vector<std::string>> stacks;
  uint64_t interned_bytes = 0;  // text of names and stacks
  Assembler assembler;
  // The config the records being drained were made under: the registered
  // one until a Configure command switches it (`tprobe configure`).
  config::Config config;
  // Cumulative count the client reported (Register, then Goodbye).
  uint64_t dropped_no_daemon = 0;
  // Entries and calls that were dropped: late for a finished step, or naming
  // an id that was never interned.
  uint64_t skipped_records = 0;
  // A corrupt record was seen: the rings are no longer read.
  bool broken = false;
  // The ring drops (sums of SeenCounters) charged to settled steps.
  uint64_t ring_full_settled = 0;
  uint64_t too_large_settled = 0;
  // The last outage the rank reported (Step.outage).
  std::optional<dump::Outage> outage;
  // Task overflow_check: calls kept so far, and whether overflow_nums was
  // reached. That ends the dump service, as in msprobe: nothing that comes
  // later goes into any file, and no later step gets a directory.
  uint64_t overflows_dumped = 0;
  bool overflow_limit_reached = false;
  // The control connection hung up without Goodbye; the producer is
  // finalised as dead once its process is gone.
  bool hung_up = false;
  // Finalised (Goodbye, death or shutdown): nothing more to do.
  bool closed = false;
  std::string last_error;
  // Reused for every entry, so rendering costs no allocation once warm.
  EntryRenderer renderer;
  RenderedEntry rendered;
};

// The credentials of a control connection (SO_PEERCRED).
struct PeerCredentials {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
};

// A control request for one producer, run by its pipeline in arrival order.
struct Command {
  enum class Kind {
    kStart,
    kStop,
    kStep,
    kFlush,
    kGoodbye,
    kHangUp,
    kConfigure
  };
  Kind kind = Kind::kFlush;
  uint32_t step = 0;  // Start, Step; Configure: the first step under config
  std::shared_ptr<const config::Config> config;  // Configure
  uint64_t unclosed_calls = 0;     // Step: calls the client never ended
  uint64_t dropped_no_daemon = 0;  // Goodbye: the client's final count
  bool write_open = false;         // Stop from the CLI: write open steps
  // Step, Goodbye: the rank's count of the step's records; Step: an outage
  // it reports.
  std::optional<v1::StepLedger> ledger;
  std::optional<v1::Outage> outage;
  // Each ring's head when the request arrived: what it must drain first.
  std::vector<uint64_t> targets;
  // Called once the command has run (from a worker thread), with the first
  // write error; null when nobody waits.
  std::function<void(Status)> done;
};

// How last_error starts when the step files could not be written (as
// opposed to a corrupt or skipped record). A Step's reply carries the
// error of writing that step.
inline constexpr std::string_view kWriteErrorPrefix = "cannot write the dump: ";

// What the control thread reports about a producer (Status) without
// touching its state; the worker publishes it after each pass.
struct PublishedStatus {
  uint32_t step = 0;
  uint64_t records_read = 0;  // over every ring
  uint32_t steps_open = 0;
  uint64_t dropped_no_daemon = 0;
  std::string last_error;
  bool dump_ended = false;  // overflow_check: overflow_nums reached
  std::optional<dump::Outage> outage;
};

// Sets the task, level and tensor_data of `options` from `config`.
void SetCaptureOptions(const config::Config& config, AssemblerOptions* options);

class Producer {
 public:
  // Registers a client: parses its config, checks and creates its dump_path
  // (PrepareDumpPath), creates its segment (SegmentName) with the rings it
  // asked for, gives it
  // to the peer's user and group (so that a daemon running as root serves
  // other users), and opens one RingReader per ring. `peer` holds the
  // connection's credentials; a relative dump_path is taken relative to the
  // working directory of the peer's pid, as msprobe would take it in the
  // trainer. Returns an error the client can act on (bad config, bad ring
  // geometry, no shared memory).
  // The process is watched through a pidfd of the peer's pid (SO_PEERCRED,
  // else reg.pid) for ProcessGone().
  static Result<std::unique_ptr<Producer>> Create(
      uint64_t client_id, const PeerCredentials& peer, const v1::Register& reg,
      const ProducerLimits& limits = {});
  ~Producer();

  uint64_t client_id() const { return client_id_; }
  int32_t pid() const { return pid_; }
  int32_t rank() const { return rank_; }
  // The user of the process that registered it (SO_PEERCRED): the owner
  // of its segment and the only user besides the operator whose CLI
  // commands reach it.
  uid_t uid() const { return uid_; }
  // Its primary group, and that group followed by the supplementary groups
  // its process had when it registered (RankGroups): with uid(), whom its
  // files are made as (fs_identity.h).
  gid_t gid() const { return gid_; }
  const std::vector<gid_t>& groups() const { return groups_; }
  // The config the client registered with. What a live `tprobe configure`
  // may change is in ProducerState::config; the rest (dump_path, the
  // "tprobe" section) stays as registered.
  const config::Config& config() const { return config_; }
  const std::string& segment_name() const { return segment_->name(); }
  const shm::Segment& segment() const { return *segment_; }
  const ProducerLimits& limits() const { return limits_; }
  const AssemblerOptions& options() const { return options_; }

  // True once the producer's process has exited (or cannot be watched and
  // no longer exists). A process that merely closed its socket is alive.
  bool ProcessGone() const;

  // Queues a command after the ones before it, noting each ring's head.
  // On a closed queue (the producer was finalised) the command has nothing
  // to do: its done callback is called at once with Ok.
  void Enqueue(Command command);
  // Closes the queue: later commands complete at once. Returns the commands
  // still queued, for the caller to complete.
  std::deque<Command> CloseQueue();
  // Takes the oldest queued command. Only the worker holding the state may
  // call it, so commands run in order.
  std::optional<Command> TakeCommand();
  bool HasCommands() const;

  // `tprobe configure`: offers `config` to the client. The directive
  // (tprobe start/stop) is cleared and the segment's config_generation
  // bumped; the client fetches the config (OfferedConfig) at its next step
  // boundary. Thread safety: any thread.
  void OfferConfig(config::Config config);
  // The config offered last, or nullptr when none was.
  std::shared_ptr<const config::Config> OfferedConfig() const;

  // What Status reports; Publish is called by the worker holding the state.
  PublishedStatus Published() const;
  void Publish(const ProducerState& state);

  // Sums over the rings, read from their headers (any thread). Values are
  // whatever the client wrote: use them for display only.
  struct RingCounters {
    uint64_t fill_bytes = 0;
    uint64_t records = 0;
    uint64_t bytes = 0;
    uint64_t dropped_ring_full = 0;
    uint64_t dropped_too_large = 0;
  };
  RingCounters Counters() const;

  // Exclusive access to the state.
  class Locked {
   public:
    ProducerState* operator->() const { return state_; }
    ProducerState& operator*() const { return *state_; }

   private:
    friend class Producer;
    Locked(std::unique_lock<std::mutex> lock, ProducerState* state)
        : lock_(std::move(lock)), state_(state) {}
    std::unique_lock<std::mutex> lock_;
    ProducerState* state_;
  };

  // Blocks until the state is free. While it waits, TryLock() fails, so the
  // drain thread gives the control thread its turn.
  Locked Lock();
  // The state if it is free and no Lock() is waiting, else nullopt.
  std::optional<Locked> TryLock();

 private:
  Producer(uint64_t client_id, const v1::Register& reg, config::Config config,
           std::unique_ptr<shm::Segment> segment, AssemblerOptions options,
           const ProducerLimits& limits, pid_t watched_pid,
           const PeerCredentials& peer, std::vector<gid_t> groups);

  const uint64_t client_id_;
  const int32_t pid_;
  const uid_t uid_;
  const gid_t gid_;
  const std::vector<gid_t> groups_;
  const int32_t rank_;
  const config::Config config_;
  const std::unique_ptr<shm::Segment> segment_;
  const ProducerLimits limits_;
  const AssemblerOptions options_;
  const pid_t watched_pid_;
  const uint64_t watched_start_time_;
  int pidfd_ = -1;  // -1: watched through /proc instead

  mutable std::mutex queue_mu_;
  std::deque<Command> queue_;
  bool queue_closed_ = false;

  mutable std::mutex offered_mu_;
  std::shared_ptr<const config::Config> offered_;
  uint64_t offered_generation_ = 0;

  mutable std::mutex published_mu_;
  PublishedStatus published_;

  std::mutex mu_;
  std::atomic<int> waiting_{0};  // Lock() calls in progress
  ProducerState state_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_PRODUCER_H_
