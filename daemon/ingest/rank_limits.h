#ifndef TPROBE_DAEMON_INGEST_RANK_LIMITS_H_
#define TPROBE_DAEMON_INGEST_RANK_LIMITS_H_

// What one rank may make the daemon hold: set from tprobed's flags
// (main.cc) and checked by the drain (drain.h).

#include <cstddef>
#include <cstdint>

namespace tprobe::daemon {

// Bounds on what one rank can make the daemon hold or do: shared memory
// is untrusted, so every size a client declares is capped here. Exceeding
// one marks the rank's stream corrupt (a tensor over max_tensor_bytes is
// only left incomplete).
struct RankLimits {
  // A tensor's declared nbytes; larger tensors get statistics null.
  uint64_t max_tensor_bytes = uint64_t{4} << 30;
  // Interned names and stacks of one rank: count and total text bytes.
  size_t max_interned = size_t{1} << 20;
  uint64_t max_interned_bytes = uint64_t{256} << 20;
  // Closed tensors of one ring waiting for their Entry (a module's inputs
  // wait while its children's entries go by; tensors no Entry refers to wait
  // until their step is settled), and their kept bytes (task tensor).
  size_t max_waiting_tensors = size_t{1} << 16;
  uint64_t max_waiting_bytes = uint64_t{16} << 30;
  // Entries held for statistics the rank has not sent yet
  // (record::kTensorStatsByProducer), and their body bytes.
  size_t max_held_entries = size_t{1} << 16;
  uint64_t max_held_entry_bytes = uint64_t{1} << 30;
  // Open steps (trees) of one rank: the drain reads no record that
  // would open one more (drain.h), so a rank that runs ahead of its Step
  // commands fills its rings instead of the daemon's memory.
  size_t max_open_steps = 64;
  // ... and the bytes they may hold (Assembler::open_bytes) before the drain
  // opens no further one. A single step may exceed it: its own records are
  // always read.
  uint64_t max_open_bytes = uint64_t{1} << 30;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_RANK_LIMITS_H_
