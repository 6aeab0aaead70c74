// One registered rank: its segment, readers, command queue and state
// (rank.h).

#include "daemon/ingest/rank.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <utility>

#include "common/config/config_proto.h"
#include "daemon/process/crash_cleanup.h"
#include "daemon/process/dump_path_check.h"
#include "daemon/process/fs_identity.h"
#include "daemon/process/shm_space.h"

namespace tprobe::daemon {
namespace {

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// A ring takes records of at most half its size.
static_assert(config::kBoundaryRingBytes >= 2 * record::kMaxBoundaryBytes);

// `ring_count` counts the client's boundary ring too, one beyond the data
// rings its config names (common/shm/README.md).
Status CheckGeometry(uint32_t ring_count, uint64_t ring_bytes) {
  if (ring_count < 1 || ring_count > config::kMaxRingCount + 1) {
    return Status::InvalidArgument("ring_count " + std::to_string(ring_count) +
                                   " is out of range: use 1 to " +
                                   std::to_string(config::kMaxRingCount + 1) +
                                   " (the data rings and the boundary ring)");
  }
  if (!IsPowerOfTwo(ring_bytes) || ring_bytes < config::kMinRingBytes ||
      ring_bytes > config::kMaxRingBytes) {
    return Status::InvalidArgument("ring_bytes " + std::to_string(ring_bytes) +
                                   " must be a power of two from " +
                                   std::to_string(config::kMinRingBytes) +
                                   " to " +
                                   std::to_string(config::kMaxRingBytes));
  }
  return Status::Ok();
}

// A pidfd for `pid`, or -1 where the kernel has none (before Linux 5.3).
int OpenPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

// One reader per ring of `segment`.
std::vector<shm::RingReader> Readers(const shm::Segment& segment) {
  std::vector<shm::RingReader> readers;
  for (uint32_t i = 0; i < segment.ring_count(); ++i) {
    readers.emplace_back(segment.ring_header(i), segment.ring_data(i));
  }
  return readers;
}

}  // namespace

void SetCaptureOptions(const config::Config& config,
                       AssemblerOptions* options) {
  options->task = config::TaskName(config.task);
  options->level = config::LevelName(config.level);
  // msprobe keeps the tensors of the calls it dumps in both tasks; with
  // overflow_check only the overflowing calls are dumped.
  options->tensor_data = config.task == config::Task::kTensor ||
                         config.task == config::Task::kOverflowCheck;
}

Result<std::unique_ptr<Rank>> Rank::Create(uint64_t client_id,
                                           const PeerCredentials& peer,
                                           const v1::Register& reg,
                                           const RankLimits& limits) {
  if (!reg.has_config()) {
    return Status::InvalidArgument("Register carries no config");
  }
  auto parsed = config::FromProto(reg.config());
  if (!parsed.ok()) return Status::InvalidArgument(parsed.status().message());
  config::Config config = std::move(parsed).value();
  if (reg.pid() <= 0) {
    return Status::InvalidArgument("Register needs the client's pid");
  }
  // Unset, the framework is PyTorch.
  const dump::Framework* framework = dump::FindFramework(
      reg.framework().empty() ? dump::kPyTorch.name : reg.framework());
  if (framework == nullptr) {
    return Status::InvalidArgument(
        "framework '" + reg.framework() +
        "' is not one tprobed dumps: use pytorch or mindspore");
  }
  const uint32_t ring_count =
      reg.ring_count() != 0 ? reg.ring_count() : config.ring_count + 1;
  const uint64_t ring_bytes =
      reg.ring_bytes() != 0 ? reg.ring_bytes() : config.ring_bytes;
  if (Status s = CheckGeometry(ring_count, ring_bytes); !s.ok()) return s;
  std::vector<gid_t> groups = RankGroups(peer.gid, peer.pid);
  auto write_path =
      ResolveDumpPath(config.dump_path, peer.pid > 0 ? peer.pid : reg.pid(),
                      peer.uid, peer.gid, groups);
  if (!write_path.ok()) return write_path.status();
  {
    FsIdentity as_client(peer.uid, peer.gid, groups);
    if (as_client.ok()) RemoveStaleTempFiles(*write_path, reg.rank());
  }

  if (Status s = CheckShmSpace(
          shm::SegmentBytes(ring_count, ring_bytes, config::kBoundaryRingBytes),
          "the " + std::to_string(ring_count - 1) + " rings of " +
              std::to_string(ring_bytes >> 10) +
              " KiB and the boundary ring of rank " +
              std::to_string(reg.rank()));
      !s.ok()) {
    return s;
  }
  const std::string name = SegmentName(peer.uid, reg.pid(), client_id);
  auto segment = shm::Segment::Create(name, ring_count, ring_bytes,
                                      config::kBoundaryRingBytes, reg.pid(),
                                      reg.start_time());
  if (!segment.ok()) return segment.status();

  AssemblerOptions options;
  SetCaptureOptions(config, &options);
  options.framework = framework;
  options.dump_path = config.dump_path;
  options.write_path = std::move(write_path).value();
  options.rank = reg.rank();
  return std::unique_ptr<Rank>(
      new Rank(client_id, reg, std::move(config), std::move(segment).value(),
               std::move(options), limits, peer.pid > 0 ? peer.pid : reg.pid(),
               peer, std::move(groups)));
}

Rank::Rank(uint64_t client_id, const v1::Register& reg, config::Config config,
           std::unique_ptr<shm::Segment> segment, AssemblerOptions options,
           const RankLimits& limits, pid_t watched_pid,
           const PeerCredentials& peer, std::vector<gid_t> groups)
    : client_id_(client_id),
      pid_(reg.pid()),
      uid_(peer.uid),
      gid_(peer.gid),
      groups_(std::move(groups)),
      rank_(reg.rank()),
      config_(std::move(config)),
      segment_(std::move(segment)),
      limits_(limits),
      options_(options),
      watched_pid_(watched_pid),
      watched_start_time_(shm::ProcessStartTime(watched_pid)),
      pidfd_(OpenPidfd(watched_pid)),
      state_(std::move(options), config_, Readers(*segment_)) {
  // Shown by status; the steps they belong to come as an outage (Step).
  state_.dropped_no_daemon = reg.dropped_no_daemon();
}

Rank::~Rank() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool Rank::ProcessGone() const {
  if (pidfd_ >= 0) {
    // A pidfd turns readable when the process exits (a zombie counts).
    pollfd p{pidfd_, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }
  if (::kill(watched_pid_, 0) != 0 && errno == ESRCH) return true;
  // Another process under a reused pid, or the pid's zombie: both mean the
  // registered process is gone. (ProcessStartTime is 0 for a missing pid.)
  return shm::ProcessStartTime(watched_pid_) != watched_start_time_ ||
         shm::ProcessIsZombie(watched_pid_);
}

void Rank::Enqueue(Command command) {
  command.targets.clear();
  for (uint32_t i = 0; i < segment_->ring_count(); ++i) {
    command.targets.push_back(
        segment_->ring_header(i)->head.load(std::memory_order_acquire));
  }
  std::unique_lock lock(queue_mu_);
  if (!queue_closed_) {
    queue_.push_back(std::move(command));
    return;
  }
  lock.unlock();
  if (command.done) command.done(Status::Ok());
}

std::deque<Command> Rank::CloseQueue() {
  std::lock_guard lock(queue_mu_);
  queue_closed_ = true;
  return std::exchange(queue_, {});
}

std::optional<Command> Rank::TakeCommand() {
  std::lock_guard lock(queue_mu_);
  if (queue_.empty()) return std::nullopt;
  Command c = std::move(queue_.front());
  queue_.pop_front();
  return c;
}

bool Rank::HasCommands() const {
  std::lock_guard lock(queue_mu_);
  return !queue_.empty();
}

void Rank::OfferConfig(Offer offer) {
  std::lock_guard lock(offered_mu_);
  offered_ = std::make_shared<const Offer>(std::move(offer));
  shm::SegmentHeader* header = segment_->header();
  // The new config replaces a live start/stop: the client reads the cleared
  // directive once it sees the new generation.
  std::atomic_ref<uint64_t>(header->directive)
      .store(0, std::memory_order_release);
  std::atomic_ref<uint64_t>(header->config_generation)
      .store(++offered_generation_, std::memory_order_release);
}

std::shared_ptr<const Rank::Offer> Rank::Offered() const {
  std::lock_guard lock(offered_mu_);
  return offered_;
}

PublishedStatus Rank::Published() const {
  std::lock_guard lock(published_mu_);
  return published_;
}

void Rank::Publish(const RankState& state) {
  const uint32_t step = state.assembler.current_step();
  uint64_t records_read = 0;
  for (const RingState& ring : state.rings) records_read += ring.records_read;
  const auto steps_open =
      static_cast<uint32_t>(state.assembler.OpenSteps().size());
  std::lock_guard lock(published_mu_);
  published_.records_read = records_read;
  published_.steps_open = steps_open;
  if (published_.step == step &&
      published_.dropped_no_daemon == state.dropped_no_daemon &&
      published_.last_error.size() == state.last_error.size() &&
      published_.last_error == state.last_error &&
      published_.dump_ended == state.overflow_limit_reached &&
      published_.outage.has_value() == state.outage.has_value()) {
    return;
  }
  published_.outage = state.outage;
  published_.step = step;
  published_.dropped_no_daemon = state.dropped_no_daemon;
  published_.last_error = state.last_error;
  published_.dump_ended = state.overflow_limit_reached;
}

Rank::RingCounters Rank::Counters() const {
  RingCounters c;
  for (uint32_t i = 0; i < segment_->ring_count(); ++i) {
    const shm::RingHeader* h = segment_->ring_header(i);
    const uint64_t tail = h->tail.load(std::memory_order_acquire);
    const uint64_t head = h->head.load(std::memory_order_acquire);
    c.fill_bytes += head - tail;
    c.records += h->records_written.load(std::memory_order_relaxed);
    c.bytes += h->bytes_written.load(std::memory_order_relaxed);
    c.dropped += RingLossesOf(*h);
  }
  return c;
}

Rank::Locked Rank::Lock() {
  waiting_.fetch_add(1, std::memory_order_acq_rel);
  std::unique_lock lock(mu_);
  waiting_.fetch_sub(1, std::memory_order_acq_rel);
  return Locked(std::move(lock), &state_);
}

std::optional<Rank::Locked> Rank::TryLock() {
  if (waiting_.load(std::memory_order_acquire) > 0) return std::nullopt;
  std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  return Locked(std::move(lock), &state_);
}

}  // namespace tprobe::daemon
