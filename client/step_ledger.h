#ifndef TPROBE_CLIENT_STEP_LEDGER_H_
#define TPROBE_CLIENT_STEP_LEDGER_H_

// A rank's own accounting of its records, step by step: the client half of
// tprobe.json's "records" (the daemon checks it against what it read).
//
// At the end of each step Close() turns the Recorder's running totals
// (recorder.h RecordTotals) into the step's counts:
//   produced = committed + read_by_lost_daemon + every StepLosses
//              (common/record_losses.h: ring_full, too_large, no_daemon,
//              daemon_gone)
// where `committed` went into the rings of the daemon connected now (with
// each ring's cut, so the daemon can check it read them all), and the last
// two terms are records committed to a daemon that went away: read by it
// (written only if its journal kept them) or left unread.
//
// A step that lost records to the daemon's absence belongs to an outage:
// a range of steps, reported once to the next daemon (Step.outage), which
// records it in tprobe.json and in `tprobe status`.
//
// Thread safety: NoteLostEntry may be called from any thread; Close and
// TakeOutage from the thread that ends steps.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/recorder.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::client {

class StepLedger {
 public:
  // At most this many lost entry names are kept per step (all are counted).
  static constexpr size_t kMaxNames = 64;

  // An entry of the current step that never reached the rings of a
  // connected daemon: its Entry record or the interned name it needed was
  // dropped (ring full, too large). Entries lost without a daemon are
  // counted by the outage instead (naming them would cost the no-daemon
  // hook more than its one branch).
  void NoteLostEntry(std::string_view name);

  // Ends `step`: its counts since the previous Close, given the totals now.
  // A step that lost records to the daemon's absence joins the outage;
  // `first_unacknowledged` is the oldest step whose end no daemon
  // acknowledged, where the outage may have begun.
  v1::StepLedger Close(uint32_t step, const RecordTotals& now,
                       std::optional<uint32_t> first_unacknowledged);

  // The outage to report now, once a daemon is connected again; it is then
  // forgotten.
  std::optional<v1::Outage> TakeOutage();

 private:
  std::mutex mu_;  // guards lost_, lost_names_
  uint64_t lost_ = 0;
  std::vector<std::string> lost_names_;
  RecordTotals last_;
  // Records a lost daemon left unread that were not yet charged to a step
  // (they may have been committed before the step that noticed them).
  uint64_t orphaned_due_ = 0;
  std::optional<v1::Outage> outage_;
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_STEP_LEDGER_H_
