#ifndef TPROBE_DAEMON_DRAIN_WORKER_H_
#define TPROBE_DAEMON_DRAIN_WORKER_H_

// The drain thread: it polls every producer's rings, applies what it finds
// (drain.h), and every flush_period rewrites the dirty trees so that a job
// killed mid-run keeps what was captured.
//
// Idle cost: while records flow it polls without pausing. When a pass finds
// nothing it sleeps, first min_idle_sleep, doubling with every further
// empty pass up to max_idle_sleep, and back to no pause as soon as a pass
// finds a record. With no producer registered at all it blocks until one
// registers (or Stop()).
//
// It never waits for the control thread: a producer the control thread is
// working on (or waiting for) is skipped until the next pass.
//
// Thread safety: Start() and Stop() are called by one thread (main).

#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "daemon/logger.h"
#include "daemon/registry.h"

namespace tprobe::daemon {

struct DrainWorkerOptions {
  std::chrono::microseconds min_idle_sleep{50};
  std::chrono::microseconds max_idle_sleep{2000};
  std::chrono::milliseconds flush_period{2000};
  // Records taken from one producer before moving on to the next.
  size_t batch = 4096;
};

class DrainWorker {
 public:
  DrainWorker(Registry& registry, Logger log, DrainWorkerOptions options = {});
  ~DrainWorker();  // Stop()s
  DrainWorker(const DrainWorker&) = delete;
  DrainWorker& operator=(const DrainWorker&) = delete;

  void Start();
  // Joins the thread. Records still in the rings stay there.
  void Stop();

 private:
  void Run(std::stop_token stop);
  // Rewrites every producer's dirty trees.
  void FlushDirty(const std::vector<std::shared_ptr<Producer>>& producers);

  Registry& registry_;
  Logger log_;
  const DrainWorkerOptions options_;
  std::jthread thread_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_DRAIN_WORKER_H_
