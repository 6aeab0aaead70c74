#ifndef TPROBE_DAEMON_INGEST_COMMAND_H_
#define TPROBE_DAEMON_INGEST_COMMAND_H_

// What a rank's pipeline runs (rank_pipeline.h): a control request the
// control thread queued (Rank::Enqueue: Stop, Flush, Configure, HangUp)
// or a boundary the drain read from the rank's boundary ring (RankCommand:
// Start, Step, Goodbye).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "common/status.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::daemon {

// A command for one rank, run by its pipeline in order: a queued one
// after the records committed before it arrived, a boundary where the drain
// reads it.
struct Command {
  enum class Kind {
    kStart,
    kStop,
    kStep,
    kFlush,
    kGoodbye,
    kHangUp,
    kConfigure
  };
  Kind kind = Kind::kFlush;
  uint32_t step = 0;  // Start, Step; Configure: the first step under config
  std::shared_ptr<const config::Config> config;  // Configure
  std::string write_path;       // Configure: where the steps under config go
  uint64_t unclosed_calls = 0;  // Step: calls the client never ended
  // Step, Goodbye: why the rank wrote no entry in `step` (tprobe.json
  // why_empty); empty when it gave no cause, or one this daemon does not
  // know.
  std::string why_empty;
  uint64_t dropped_no_daemon = 0;  // Goodbye: the client's final count
  bool write_open = false;         // Stop from the CLI: write open steps
  // Step, Goodbye: the rank's count of the step's records; Step: an outage
  // it reports.
  std::optional<v1::StepLedger> ledger;
  std::optional<v1::Outage> outage;
  // A queued command: each ring's head when it arrived, what it must drain
  // first.
  std::vector<uint64_t> targets;
  // Called once the command has run (from a worker thread), with the first
  // write error; null when nobody waits.
  std::function<void(Status)> done;
};

// The command of a rank's Start, Step or Goodbye, read from its boundary
// ring. REQUIRES: `request` has one of those bodies.
Command RankCommand(const v1::Request& request);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_COMMAND_H_
