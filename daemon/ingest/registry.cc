// The registered ranks, shared by the control thread and the workers
// (registry.h).

#include "daemon/ingest/registry.h"

#include <algorithm>

namespace tprobe::daemon {

uint64_t Registry::NextClientId() {
  std::lock_guard lock(mu_);
  return next_id_++;
}

void Registry::Add(std::shared_ptr<Rank> rank) {
  {
    std::lock_guard lock(mu_);
    ranks_.push_back(std::move(rank));
    ++version_;
  }
  added_.notify_all();
}

void Registry::Remove(uint64_t client_id) {
  std::lock_guard lock(mu_);
  std::erase_if(ranks_, [client_id](const auto& p) {
    return p->client_id() == client_id;
  });
  ++version_;
}

std::vector<std::shared_ptr<Rank>> Registry::Snapshot() const {
  std::lock_guard lock(mu_);
  return ranks_;
}

bool Registry::WaitForRanks(std::stop_token stop) const {
  std::unique_lock lock(mu_);
  return added_.wait(lock, stop, [this] { return !ranks_.empty(); });
}

void Registry::Wake() {
  {
    std::lock_guard lock(mu_);
    ++wakes_;
  }
  added_.notify_all();
}

void Registry::Sleep(std::stop_token stop,
                     std::chrono::microseconds timeout) const {
  std::unique_lock lock(mu_);
  const uint64_t wakes = wakes_;
  added_.wait_for(lock, stop, timeout, [&] { return wakes_ != wakes; });
}

uint64_t Registry::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

}  // namespace tprobe::daemon
