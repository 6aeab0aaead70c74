#ifndef TPROBE_CLIENT_EMPTY_STEP_H_
#define TPROBE_CLIENT_EMPTY_STEP_H_

// Why a step the rank collected wrote no entry, and the one line on the
// trainer's stderr that says so. An empty dump is the failure users meet
// most; tprobe names its cause instead of leaving an empty folder:
//
//   rank not in "rank"     the step is selected, this rank is not: no tree
//                          is written (as msprobe writes none), so stderr
//                          alone says it
//   scope_list/risk_level  calls ran between start() and stop(), the
//                          filters kept none of them
//   no_model               a module level, and the adapter's start() got no
//                          model (the adapter says so on stderr itself)
//   no_api                 level L1, and no API call ran
//   no_calls               no module (or API) call ran
//
// Each cause is said once per process, whatever the steps and sessions;
// the step's tree carries it too (Step.why_empty, tprobe.json why_empty).
// config.json's dump_enable turned off is the adapter's to say: its start()
// does not start the session.
//
// Thread safety: NoteCall, NoteEntry and NoteNoModel may be called from any
// thread and cost one relaxed load once the step saw one; Close from the
// thread that ends steps.

#include <atomic>
#include <cstdint>

#include "common/config/config.h"
#include "common/internal_api.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::client {

// What the session knows of the step that ends (Session::Step).
struct StepFacts {
  uint32_t step = 0;
  int rank = -1;
  config::Level level = config::Level::kL0;
  bool started = false;        // start() was called in the step
  bool step_selected = false;  // by the config's "step" (and not over)
  bool rank_selected = false;  // by the config's "rank"
  bool filtered = false;       // scope, list or risk_level filter calls
  bool by_risk_level = false;  // risk_level alone filters
  bool daemon = false;         // a daemon is connected (it writes a tree)
};

class TPROBE_INTERNAL EmptyStep {
 public:
  // A call began while collecting.
  void NoteCall() { Set(saw_call_); }
  // An entry of the step was handed to the rings, or would have been had
  // its name reached them (no daemon, ring full).
  void NoteEntry() { Set(wrote_entry_); }
  // The adapter's start() got no model at a module level (it said so).
  void NoteNoModel() { Set(no_model_); }

  // Ends the step described by `facts`: returns the cause the step's tree
  // carries (UNSPECIFIED when it wrote an entry, had no tree or no known
  // cause), says a cause on stderr the first time the process meets it,
  // and forgets the step's notes.
  v1::EmptyCause Close(const StepFacts& facts);

 private:
  static void Set(std::atomic<bool>& flag) {
    if (!flag.load(std::memory_order_relaxed)) {
      flag.store(true, std::memory_order_relaxed);
    }
  }
  std::atomic<bool> saw_call_{false};
  std::atomic<bool> wrote_entry_{false};
  std::atomic<bool> no_model_{false};
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_EMPTY_STEP_H_
