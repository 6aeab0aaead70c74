#ifndef TPROBE_DAEMON_INGEST_RANK_H_
#define TPROBE_DAEMON_INGEST_RANK_H_

// One registered client process (a trainer rank): the shared-memory segment
// the daemon created for it, one RingReader per ring, and everything the
// daemon keeps about it in its own memory: the intern tables, the decode
// state of each ring and the open dump trees.
//
// Nothing here lives in shared memory. The segment holds only the rings; the
// mutex below is ordinary process memory.
//
// Control requests reach the state through the rank's command queue
// (Enqueue), never directly: the worker that holds the state runs them in
// order, each after draining what the rank had committed when the
// request arrived (rank_pipeline.h). So the control thread never waits on
// the data, and one rank's backlog never delays another rank.
//
// Thread safety: the identity accessors are immutable and may be called from
// any thread, as may Enqueue, Counters, Published and ProcessGone. The state
// is reached only through a Locked handle: a worker takes it with TryLock()
// (that is its claim on the rank), shutdown with Lock().

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
#include "common/record_losses.h"
#include "common/shm/ring.h"
#include "common/shm/segment.h"
#include "common/status.h"
#include "daemon/ingest/command.h"
#include "daemon/ingest/rank_limits.h"
#include "daemon/ingest/rank_state.h"
#include "daemon/output/assembler.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::daemon {

// The credentials of a control connection (SO_PEERCRED).
struct PeerCredentials {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
};

// How last_error starts when the step files could not be written (as
// opposed to a corrupt or skipped record). A Step's reply carries the
// error of writing that step.
inline constexpr std::string_view kWriteErrorPrefix = "cannot write the dump: ";

// What the control thread reports about a rank (Status) without
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

class Rank {
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
  static Result<std::unique_ptr<Rank>> Create(uint64_t client_id,
                                              const PeerCredentials& peer,
                                              const v1::Register& reg,
                                              const RankLimits& limits = {});
  ~Rank();

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
  // The pid the daemon watches (the client's, as the daemon sees it).
  pid_t watched_pid() const { return watched_pid_; }
  // The config the client registered with. What a live `tprobe configure`
  // may change is in RankState::config (and the dump's place in the
  // assembler's options); the "tprobe" section stays as registered.
  const config::Config& config() const { return config_; }
  const std::string& segment_name() const { return segment_->name(); }
  const shm::Segment& segment() const { return *segment_; }
  const RankLimits& limits() const { return limits_; }
  // The assembler options it registered with (its dump_path as registered).
  const AssemblerOptions& options() const { return options_; }

  // True once the rank's process has exited (or cannot be watched and
  // no longer exists). A process that merely closed its socket is alive.
  bool ProcessGone() const;

  // Queues a command after the ones before it, noting each ring's head.
  // On a closed queue (the rank was finalised) the command has nothing
  // to do: its done callback is called at once with Ok.
  void Enqueue(Command command);
  // Closes the queue: later commands complete at once. Returns the commands
  // still queued, for the caller to complete.
  std::deque<Command> CloseQueue();
  // Takes the oldest queued command. Only the worker holding the state may
  // call it, so commands run in order.
  std::optional<Command> TakeCommand();
  bool HasCommands() const;

  // A config offered live, and where the rank's dump goes under it: its
  // dump_path made absolute and prepared (ResolveDumpPath).
  struct Offer {
    config::Config config;
    std::string write_path;
  };
  // `tprobe configure`: offers `offer` to the client. The directive
  // (tprobe start/stop) is cleared and the segment's config_generation
  // bumped; the client fetches the config (Offered) at its next step
  // boundary. Thread safety: any thread.
  void OfferConfig(Offer offer);
  // The config offered last, or nullptr when none was.
  std::shared_ptr<const Offer> Offered() const;

  // What Status reports; Publish is called by the worker holding the state.
  PublishedStatus Published() const;
  void Publish(const RankState& state);

  // Sums over the rings, read from their headers (any thread). Values are
  // whatever the client wrote: use them for display only.
  struct RingCounters {
    uint64_t fill_bytes = 0;
    uint64_t records = 0;
    uint64_t bytes = 0;
    RingLosses dropped;
  };
  RingCounters Counters() const;

  // Exclusive access to the state.
  class Locked {
   public:
    RankState* operator->() const { return state_; }
    RankState& operator*() const { return *state_; }

   private:
    friend class Rank;
    Locked(std::unique_lock<std::mutex> lock, RankState* state)
        : lock_(std::move(lock)), state_(state) {}
    std::unique_lock<std::mutex> lock_;
    RankState* state_;
  };

  // Blocks until the state is free. While it waits, TryLock() fails, so the
  // drain thread gives the control thread its turn.
  Locked Lock();
  // The state if it is free and no Lock() is waiting, else nullopt.
  std::optional<Locked> TryLock();

 private:
  Rank(uint64_t client_id, const v1::Register& reg, config::Config config,
       std::unique_ptr<shm::Segment> segment, AssemblerOptions options,
       const RankLimits& limits, pid_t watched_pid, const PeerCredentials& peer,
       std::vector<gid_t> groups);

  const uint64_t client_id_;
  const int32_t pid_;
  const uid_t uid_;
  const gid_t gid_;
  const std::vector<gid_t> groups_;
  const int32_t rank_;
  const config::Config config_;
  const std::unique_ptr<shm::Segment> segment_;
  const RankLimits limits_;
  const AssemblerOptions options_;
  const pid_t watched_pid_;
  const uint64_t watched_start_time_;
  int pidfd_ = -1;  // -1: watched through /proc instead

  mutable std::mutex queue_mu_;
  std::deque<Command> queue_;
  bool queue_closed_ = false;

  mutable std::mutex offered_mu_;
  std::shared_ptr<const Offer> offered_;
  uint64_t offered_generation_ = 0;

  mutable std::mutex published_mu_;
  PublishedStatus published_;

  std::mutex mu_;
  std::atomic<int> waiting_{0};  // Lock() calls in progress
  RankState state_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_RANK_H_
