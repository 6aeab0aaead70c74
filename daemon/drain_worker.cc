#include "daemon/drain_worker.h"

#include <algorithm>

#include "daemon/drain.h"

namespace tprobe::daemon {

DrainWorker::DrainWorker(Registry& registry, Logger log,
                         DrainWorkerOptions options)
    : registry_(registry), log_(std::move(log)), options_(options) {}

DrainWorker::~DrainWorker() { Stop(); }

void DrainWorker::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void DrainWorker::Stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void DrainWorker::Run(std::stop_token stop) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::shared_ptr<Producer>> producers;
  uint64_t version = ~uint64_t{0};
  auto next_flush = Clock::now() + options_.flush_period;
  std::chrono::microseconds idle_sleep{0};
  while (!stop.stop_requested()) {
    if (const uint64_t v = registry_.version(); v != version) {
      producers = registry_.Snapshot();
      version = v;
    }
    if (producers.empty()) {
      // Nothing to poll: no need to wake until a producer registers.
      if (!registry_.WaitForProducers(stop)) break;
      idle_sleep = std::chrono::microseconds{0};
      continue;
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
    if (consumed != 0) {
      idle_sleep = std::chrono::microseconds{0};
      continue;
    }
    idle_sleep = std::clamp(2 * idle_sleep, options_.min_idle_sleep,
                            options_.max_idle_sleep);
    std::this_thread::sleep_for(idle_sleep);
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
