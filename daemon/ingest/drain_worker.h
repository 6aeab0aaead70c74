#ifndef TPROBE_DAEMON_INGEST_DRAIN_WORKER_H_
#define TPROBE_DAEMON_INGEST_DRAIN_WORKER_H_

// The drain workers: a pool of threads, sized to the cores, that run the
// ranks' pipelines (rank_pipeline.h). A worker claims a rank by
// taking its state (Rank::TryLock), runs one pass, and moves on, so the
// passes of one rank never overlap and its commands and records keep
// their order, while different ranks are served in parallel. A busy or
// slow rank is skipped by the other workers, never waited for.
//
// Idle cost: while work flows a worker polls without pausing. When a round
// over every rank finds nothing it sleeps, first min_idle_sleep,
// doubling with every further empty round up to max_idle_sleep; a queued
// command (Registry::Wake) ends the sleep at once. With no rank
// registered at all it blocks until one registers (or Stop()).
//
// Nothing is rewritten on a timer: a step's files are written when the step
// closes (or on an explicit Flush).
//
// Thread safety: Start() and Stop() are called by one thread (main).

#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "daemon/ingest/registry.h"
#include "daemon/process/logger.h"

namespace tprobe::daemon {

struct DrainWorkerOptions {
  std::chrono::microseconds min_idle_sleep{50};
  std::chrono::microseconds max_idle_sleep{2000};
  // Records taken from one rank in one pass before moving on.
  size_t batch = 4096;
  // Worker threads; 0: one per core.
  unsigned threads = 0;
};

class DrainWorker {
 public:
  DrainWorker(Registry& registry, Logger log, DrainWorkerOptions options = {});
  ~DrainWorker();  // Stop()s
  DrainWorker(const DrainWorker&) = delete;
  DrainWorker& operator=(const DrainWorker&) = delete;

  void Start();
  // Joins the threads. Records and commands still queued stay there.
  void Stop();

  unsigned threads() const { return static_cast<unsigned>(threads_.size()); }

 private:
  void Run(std::stop_token stop, unsigned index);

  Registry& registry_;
  Logger log_;
  const DrainWorkerOptions options_;
  std::vector<std::jthread> threads_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_DRAIN_WORKER_H_
