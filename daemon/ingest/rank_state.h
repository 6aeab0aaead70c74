#ifndef TPROBE_DAEMON_INGEST_RANK_STATE_H_
#define TPROBE_DAEMON_INGEST_RANK_STATE_H_

// Everything the daemon keeps about one rank in its own memory: each
// ring's place, the parts of the drain that own their state (the intern
// tables, the tensors, construct.json's nodes, the held entries), the open
// dump trees and the rank's loss counts.
//
// Thread safety: none; the rank's mutex guards it (Rank::Lock).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "common/dump/tree.h"
#include "common/record_losses.h"
#include "daemon/ingest/construct_nodes.h"
#include "daemon/ingest/held_entries.h"
#include "daemon/ingest/intern_tables.h"
#include "daemon/ingest/ring_state.h"
#include "daemon/ingest/tensor_assembler.h"
#include "daemon/output/assembler.h"
#include "daemon/output/entry_renderer.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::daemon {

// A boundary record (record::kBoundary) the drain reached and checked: the
// rank's Start, Step or Goodbye, in order with its data. Every record the
// rank committed before it has been read; it stays in its ring until it has
// run (drain.h ReleaseBoundary), so that the rank knows it is done.
struct Boundary {
  uint32_t ring = 0;
  v1::Request request;
};

// The rank's daemon-side state, guarded by the rank's mutex.
struct RankState {
  // One RingState (and one ring of each part) per reader.
  RankState(AssemblerOptions options, config::Config registered,
            const std::vector<shm::RingReader>& readers)
      : tensors(readers.size()),
        nodes(readers.size()),
        assembler(std::move(options)),
        config(std::move(registered)) {
    rings.reserve(readers.size());
    for (const shm::RingReader& reader : readers) rings.emplace_back(reader);
  }
  std::vector<RingState> rings;
  InternTables interns;
  TensorAssembler tensors;
  ConstructNodes nodes;
  // The entries held in call order behind the first that refers to a
  // tensor whose producer statistics have not arrived.
  HeldEntries held;
  Assembler assembler;
  // The config the records being drained were made under: the registered
  // one until a Configure command switches it (`tprobe configure`).
  config::Config config;
  // Cumulative count the client reported (Register, then Goodbye).
  uint64_t dropped_no_daemon = 0;
  // Entries and calls that were dropped: late for a finished step, or naming
  // an id that was never interned.
  uint64_t skipped_records = 0;
  // A corrupt record was seen: the rings are no longer read.
  bool broken = false;
  // The ring drops (sums of SeenCounters) charged to settled steps.
  RingLosses drops_settled;
  // The last outage the rank reported (Step.outage).
  std::optional<dump::Outage> outage;
  // Task overflow_check: calls kept so far, and whether overflow_nums was
  // reached. That ends the dump service, as in msprobe: nothing that comes
  // later goes into any file, and no later step gets a directory.
  uint64_t overflows_dumped = 0;
  bool overflow_limit_reached = false;
  // The next boundary to run (drain.h): nothing more is read until then.
  std::optional<Boundary> boundary;
  // The control connection hung up; once the process is gone its rings are
  // read to the end, and without a Goodbye there the rank died.
  bool hung_up = false;
  // Finalised (Goodbye, death or shutdown): nothing more to do.
  bool closed = false;
  std::string last_error;
  // Reused for every entry, so rendering costs no allocation once warm:
  // the renderer, what it rendered, and the refs of the tensors it used.
  EntryRenderer renderer;
  RenderedEntry rendered;
  std::vector<uint32_t> referenced;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_RANK_STATE_H_
