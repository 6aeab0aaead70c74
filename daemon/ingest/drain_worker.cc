// The drain workers' threads and their idle backoff (drain_worker.h).

#include "daemon/ingest/drain_worker.h"

#include <algorithm>

#include "daemon/ingest/rank_pipeline.h"
#include "daemon/process/fs_identity.h"

namespace tprobe::daemon {

DrainWorker::DrainWorker(Registry& registry, Logger log,
                         DrainWorkerOptions options)
    : registry_(registry), log_(std::move(log)), options_(options) {}

DrainWorker::~DrainWorker() { Stop(); }

void DrainWorker::Start() {
  unsigned n = options_.threads;
  if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < n; ++i) {
    threads_.emplace_back([this, i](std::stop_token stop) { Run(stop, i); });
  }
}

void DrainWorker::Stop() {
  for (auto& t : threads_) t.request_stop();
  threads_.clear();  // joins
}

void DrainWorker::Run(std::stop_token stop, unsigned index) {
  std::vector<std::shared_ptr<Rank>> ranks;
  uint64_t version = ~uint64_t{0};
  std::chrono::microseconds idle_sleep{0};
  size_t round = 0;
  while (!stop.stop_requested()) {
    if (const uint64_t v = registry_.version(); v != version) {
      ranks = registry_.Snapshot();
      version = v;
    }
    if (ranks.empty()) {
      // Nothing to poll: no need to wake until a rank registers.
      if (!registry_.WaitForRanks(stop)) break;
      idle_sleep = std::chrono::microseconds{0};
      continue;
    }
    // Each worker starts its round at another rank, so that the
    // workers spread over the ranks instead of queueing on one.
    size_t work = 0;
    const size_t n = ranks.size();
    const size_t first = (index + round++) % n;
    for (size_t k = 0; k < n; ++k) {
      Rank& rank = *ranks[(first + k) % n];
      if (auto state = rank.TryLock()) {
        // Every file of the rank is made as the rank's user.
        FsIdentity as_rank(rank.uid(), rank.gid(), rank.groups());
        if (as_rank.ok()) {
          work += RunPipeline(rank, **state, registry_, *log_, options_.batch);
        }
      }
    }
    if (work != 0) {
      idle_sleep = std::chrono::microseconds{0};
      continue;
    }
    idle_sleep = std::clamp(2 * idle_sleep, options_.min_idle_sleep,
                            options_.max_idle_sleep);
    registry_.Sleep(stop, idle_sleep);
  }
}

}  // namespace tprobe::daemon
