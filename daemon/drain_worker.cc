#include "daemon/drain_worker.h"

#include "daemon/drain.h"

namespace tprobe::daemon {

DrainWorker::DrainWorker(Registry& registry, Logger log,
                         DrainWorkerOptions options)
    : registry_(registry), log_(std::move(log)), options_(options) {}

DrainWorker::~DrainWorker() { Stop(); }

void DrainWorker::Start() {
  stop_.store(false);
  thread_ = std::thread([this] { Run(); });
}

void DrainWorker::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void DrainWorker::Run() {
  using Clock = std::chrono::steady_clock;
  std::vector<std::shared_ptr<Producer>> producers;
  uint64_t version = ~uint64_t{0};
  auto next_flush = Clock::now() + options_.flush_period;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (const uint64_t v = registry_.version(); v != version) {
      producers = registry_.Snapshot();
      version = v;
    }
    size_t consumed = 0;
    for (const auto& producer : producers) {
      if (auto state = producer->TryLock()) {
        consumed += DrainSome(*producer, **state, options_.batch, *log_);
      }
    }
    if (Clock::now() >= next_flush) {
      FlushDirty(producers);
      next_flush = Clock::now() + options_.flush_period;
    }
    if (consumed == 0) std::this_thread::sleep_for(options_.idle_sleep);
  }
}

void DrainWorker::FlushDirty(
    const std::vector<std::shared_ptr<Producer>>& producers) {
  for (const auto& producer : producers) {
    auto state = producer->Lock();
    if (state->closed) continue;
    if (Status s = state->assembler.WriteDirty(); !s.ok()) {
      state->last_error = s.message();
      log_->error("producer {} (pid {}, rank {}): periodic flush: {}",
                  producer->client_id(), producer->pid(), producer->rank(),
                  s.message());
    }
  }
}

}  // namespace tprobe::daemon
