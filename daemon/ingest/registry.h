#ifndef TPROBE_DAEMON_INGEST_REGISTRY_H_
#define TPROBE_DAEMON_INGEST_REGISTRY_H_

// The registered ranks, shared by the control thread (which adds them
// and queues their commands) and the drain workers (which poll them and
// remove the finalised ones).
//
// Thread safety: every method may be called from any thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stop_token>
#include <vector>

#include "daemon/ingest/rank.h"

namespace tprobe::daemon {

class Registry {
 public:
  // A new client id, starting at 1.
  uint64_t NextClientId();

  void Add(std::shared_ptr<Rank> rank);
  // Forgets the rank; callers holding it keep it alive.
  void Remove(uint64_t client_id);

  // The ranks now, in registration order.
  std::vector<std::shared_ptr<Rank>> Snapshot() const;
  // Changes whenever the set changes, so a poller can keep its snapshot.
  uint64_t version() const;

  // Blocks while there is no rank, until one is added or `stop` is
  // requested. Returns true when there is a rank.
  bool WaitForRanks(std::stop_token stop) const;

  // Wakes the workers sleeping in Sleep(): a command was queued.
  void Wake();
  // Sleeps up to `timeout`, or until Wake() or `stop`.
  void Sleep(std::stop_token stop, std::chrono::microseconds timeout) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable_any added_;
  uint64_t next_id_ = 1;
  uint64_t version_ = 0;
  uint64_t wakes_ = 0;
  std::vector<std::shared_ptr<Rank>> ranks_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_REGISTRY_H_
