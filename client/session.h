#ifndef TPROBE_CLIENT_SESSION_H_
#define TPROBE_CLIENT_SESSION_H_

// One trainer rank's dump session: the validated config, the connection to
// the daemon, msprobe's start/stop/step lifecycle and the per-step call
// indices. The public C++ Client and the Python binding are both thin
// layers over a Session.
//
// Thread safety: all methods may be called from any thread.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "client/control_channel.h"
#include "client/core.h"
#include "common/config/config.h"
#include "common/status.h"

namespace tprobe::client {

struct SessionOptions {
  std::string config_path;  // empty: msprobe's defaults
  std::string dump_path;    // overrides the config's when not empty
  std::string socket_path;  // overrides config and $TPROBE_SOCKET
  int rank = -1;
  std::string framework = "pytorch";
  bool autostart_daemon = false;
  std::string daemon_path;
  int connect_timeout_ms = 5000;
};

class Session {
 public:
  // Loads and validates the config, then connects (or goes on without a
  // daemon). Returns an error for a bad config.
  static Result<std::unique_ptr<Session>> Create(const SessionOptions& options);

  // Says goodbye and waits (bounded) until the daemon has flushed.
  ~Session();

  void Start();
  void Stop();
  void Step();

  // Whether hooks should record now: started, this step and rank selected,
  // and the configured steps not yet over.
  bool collecting() const {
    return collecting_.load(std::memory_order_acquire);
  }
  uint32_t step() const { return step_.load(std::memory_order_acquire); }
  int rank() const { return rank_; }
  const config::Config& config() const { return config_; }
  Core& core() { return core_; }
  bool connected() const { return core_.attached(); }

  // The next call index for `prefix` in this step (0 first). Counts reset
  // at Step().
  uint32_t NextIndex(const std::string& prefix);

  // Waits until the daemon has written everything sent so far; false when no
  // daemon answered within timeout_ms.
  bool Flush(int timeout_ms);

 private:
  Session(config::Config config, int rank, int connect_timeout_ms);
  void UpdateCollecting();

  const config::Config config_;
  const int rank_;
  const int connect_timeout_ms_;
  Core core_;
  std::unique_ptr<ControlChannel> channel_;

  std::mutex mu_;  // guards running_, ended_ and indices_
  bool running_ = false;
  bool ended_ = false;
  std::unordered_map<std::string, uint32_t> indices_;
  std::atomic<uint32_t> step_{0};
  std::atomic<bool> collecting_{false};
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_SESSION_H_
