#ifndef TPROBE_CLIENT_SESSION_H_
#define TPROBE_CLIENT_SESSION_H_

// One trainer rank's dump session: the validated config, the connection to
// the daemon, msprobe's start/stop/step lifecycle, and what happens to each
// call: its name and index (naming.h), whether it is dumped and which of its
// data (selection.h), and the construct records the daemon builds
// construct.json from. The public C++ Client and the Python binding are thin
// layers over a Session: they only turn their framework's values into
// entries.
//
// A call goes Begin* -> (the adapter writes tensors and the entry when the
// plan says so) -> EndCall. Levels decide what is recorded at all: modules
// at L0 and mix, APIs at L1 and mix; construct records are written for
// module calls (L0, mix) and for API calls at mix only, for every call that
// is counted, dumped or not (msprobe adds construct nodes before its
// filters).
//
// Thread safety: all methods may be called from any thread. The outermost-
// API rule is per thread. The per-call methods (Begin*, CheckEnd, EndCall,
// BeginParamGrad) take no lock (but a module call at level L1, which only
// module_dump's modules make: DumpAloneAtL1) and, once the step's names are
// interned (from the second step with the same calls on), allocate nothing:
// counts, filters and ranges are atomics (naming.h, selection.h), and a
// plan's name is built into its string's capacity. Start, Stop, Step,
// SetStep, Configure and the groups lock.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/api_site.h"
#include "client/call_plan.h"
#include "client/control_channel.h"
#include "client/empty_step.h"
#include "client/naming.h"
#include "client/recorder.h"
#include "client/selection.h"
#include "client/step_ledger.h"
#include "common/config/config.h"
#include "common/internal_api.h"
#include "common/record/record.h"
#include "common/status.h"

namespace tprobe::client {

class EntryBuilder;

struct SessionOptions {
  std::string config_path;  // empty: msprobe's defaults
  std::string dump_path;    // overrides the config's when not empty
  std::string socket_path;  // overrides config and $TPROBE_SOCKET
  int rank = -1;
  std::string framework = "pytorch";  // msprobe's name, sent as data
  // msprobe's risk_level filters the framework's API calls (PyTorch's).
  bool risk_level_applies = true;
  bool autostart_daemon = false;
  std::string daemon_path;
  int connect_timeout_ms = 5000;
};

class TPROBE_INTERNAL Session {
 public:
  // Loads and validates the config, then connects (or goes on without a
  // daemon when none answers). Returns an error for a bad config, and when
  // a daemon answered but refused: it refused the registration (an unusable
  // dump_path, say) or it is not a trusted uid.
  static Result<std::unique_ptr<Session>> Create(
      const SessionOptions& options) noexcept;

  // Says goodbye and waits (bounded) until the daemon has flushed.
  ~Session();

  void Start() noexcept;
  void Stop() noexcept;
  // Ends the step: the rings' heads are published and a Step request goes
  // into the boundary ring, in order after the step's records, without
  // waiting (the daemon writes the step once it has drained it); then call
  // indices, filter ranges and the outermost-API state start again and the step
  // number advances. When the operator offered a new config (`tprobe
  // configure`: the segment's config_generation changed), the session fetches
  // it from the daemon and records the next step under it: its filters, level
  // and task; ended steps and overflows start again. The fetch waits at most
  // connect_timeout_ms; without an answer the config stays as it was.
  // `unclosed_calls` is how many of the step's calls the adapter saw begin
  // and never end; the daemon marks such a step incomplete. A collected
  // step that wrote no entry names its cause (empty_step.h): once per
  // process on stderr, and in the Step request for tprobe.json's why_empty.
  void Step(uint64_t unclosed_calls = 0) noexcept;
  // Start() and Step() for an adapter that skips its own work at the
  // boundaries of a step like the last one. StartIfSelected starts the step
  // when its selection is `selected` and nothing else is due at its start
  // (no word that the configured steps are over, no question of task
  // overflow_check to the daemon); StepIfStopped ends it when Stop() was
  // called and no live config is offered, so that the next step starts
  // under the same config, not collecting. Each returns false, and changes
  // nothing, where it would not apply: Start() or Step() then.
  bool StartIfSelected(bool selected) noexcept;
  bool StepIfStopped() noexcept;
  // Makes `step` the current step number, as msprobe's set_init_step does:
  // the next Start() records into step{step} and Step() counts on from it.
  void SetStep(uint32_t step) noexcept;
  // Gives this rank alone the config.json at `config_path` (SessionOptions'
  // dump_path still overriding), as a live `tprobe configure` gives it to
  // every rank: the daemon checks it and offers it (a changed "tprobe" key,
  // or a dump_path it cannot use, is refused, naming the key or path).
  // msprobe's dump_enable applies a changed file so. Taken up at once when this
  // step has not started (no Start() since the last Step()), else at Step(),
  // for the next step. Waits for the daemon at most connect_timeout_ms.
  Status Configure(const std::string& config_path) noexcept;

  // Whether hooks should record now: started, this step and rank selected,
  // and the configured steps not yet over.
  bool collecting() const {
    return collecting_.load(std::memory_order_acquire);
  }
  // Like collecting(), but also true between Stop() and Step(): msprobe
  // still records API backward calls then.
  bool step_active() const {
    return step_active_.load(std::memory_order_acquire);
  }
  uint32_t step() const { return step_.load(std::memory_order_acquire); }
  int rank() const { return rank_; }
  // The config in force: the one loaded at creation until a live config
  // replaces it at a step boundary. The reference stays valid for the
  // session's lifetime (replaced configs are kept).
  const config::Config& config() const {
    return current_.load(std::memory_order_acquire)->config;
  }
  Recorder& recorder() { return recorder_; }
  bool connected() const { return recorder_.attached(); }

  // Opens a module call of the module named `base` (naming.h ModuleBase). A
  // forward call takes the next index of the module; a backward call reuses
  // `forward_index`. Returns false, with nothing recorded or counted, when
  // modules are not collected now (level L1 unless `base` was given to
  // DumpAloneAtL1, not collecting, inside an API call on this thread);
  // otherwise fills *plan, and the caller must close the call with
  // EndCall(*plan).
  bool BeginModule(std::string_view base, bool forward, uint32_t forward_index,
                   CallPlan* plan) noexcept;

  // Opens an API call of the API named `base` (naming.h ApiBase), like
  // BeginModule. Only the outermost API call of a thread is recorded: while
  // one is open, nothing else on the same thread is (a forward API or module
  // call returns false and is not counted), so an API call has no children.
  // Backward calls are recorded after Stop() too, until Step().
  // A forward call given the API's `site` (api_site.h) reuses what its
  // earlier calls found there.
  bool BeginApi(std::string_view base, bool forward, uint32_t forward_index,
                CallPlan* plan, ApiSite* site = nullptr) noexcept;

  // A call ends: with scope or list, a forward call is checked again, which
  // settles plan->output (a module's outputs and parameters, an API's
  // outputs), and a backward module call is checked for the first time,
  // which settles plan->dumped, input and output. Call it once, before
  // writing the entry (API backward calls need not).
  void CheckEnd(CallPlan* plan) noexcept;

  // Closes a call opened by BeginModule or BeginApi (after its entry).
  void EndCall(const CallPlan& plan) noexcept;

  // Names a gradient of parameter `param` of the module `module_base`:
  // "{module_base}.parameters_grad.{K}". Returns false when it is not dumped
  // (level L1 unless the module was given to DumpAloneAtL1, not collecting,
  // data_mode without backward, filtered out, no daemon); otherwise the
  // caller writes the entry {param: [grad]}.
  bool BeginParamGrad(std::string_view module_base, std::string_view param,
                      CallPlan* plan) noexcept;
  // Writes the entry of the module's next parameter gradients before they
  // come, empty: it holds their place in dump.json, and the daemon fills
  // it with them (or leaves it out when none comes). Under torch.compile
  // the gradients come after the whole compiled backward; this puts them
  // where eager's come. Does nothing where BeginParamGrad would not dump.
  void ReserveParamGrad(std::string_view module_base) noexcept;

  // msprobe's module_dump at level L1: the module named `base` is recorded
  // as a module (its calls and parameter gradients, with no construct
  // node), although the level records no other. The adapter decides when
  // its forward calls are inside module_dump()...module_dump_end().
  void DumpAloneAtL1(std::string base) noexcept;

  // The adapter's start() got no model at a module level (L0, mix), and
  // said so on stderr: a step that then writes no entry gives that cause
  // (empty_step.h).
  void NoteNoModel() { empty_.NoteNoModel(); }

  // Whether an adapter should report the backward of forward calls: at
  // levels L0 and mix every backward call is a construct.json node, whatever
  // data_mode keeps; at L1 only when data_mode keeps backward data.
  // False without a daemon.
  bool WantsBackward() const {
    const ConfigVersion& version = *current_.load(std::memory_order_acquire);
    return recorder_.attached() && (version.keeps_backward ||
                                    version.config.level != config::Level::kL1);
  }

  // Writes the entry of a planned call; stack_id 0 for none. An entry with
  // an empty body only lists its stack in stack.json. A dropped entry is
  // counted lost in the step's ledger, by name.
  bool WriteEntry(const CallPlan& plan, uint32_t stack_id,
                  EntryBuilder& entry) noexcept;

  // Waits until the daemon has written everything sent so far; false when no
  // daemon answered within timeout_ms.
  bool Flush(int timeout_ms) noexcept;

  // msprobe's "optimizer" and "clip_grad" construct nodes (level mix only):
  // between BeginGroup(name) and EndGroup(), every call that writes a
  // construct node has the group as parent, and the group's node (parent
  // null) goes in just before the first of them. A group without calls
  // writes nothing. The group's CallBegin and CallEnd go to the rings of
  // the threads that write them, so the group is seen by the thread that
  // runs it (the optimizer's step runs on the training thread).
  void BeginGroup(std::string_view name) noexcept;
  void EndGroup() noexcept;

 private:
  // A config and what follows from it; never replaced once published (its
  // selection's range state changes as calls go, through atomics).
  struct ConfigVersion {
    ConfigVersion(config::Config c, bool risk_level_applies);
    const uint64_t serial;  // unique in the process, never 0 (ApiSite)
    const config::Config config;
    const bool keeps_backward;
    Selection selection;
  };

  Session(config::Config config, std::string dump_path, int rank,
          int connect_timeout_ms, bool risk_level_applies);
  ConfigVersion& current() const {
    return *current_.load(std::memory_order_acquire);
  }
  // Writes a rank's Start, Step or Goodbye into the boundary ring
  // (Recorder::WriteStart, Recorder::WriteBoundary), waiting for room as the
  // full-ring policy says, or leaves it in the ring's backlog until there
  // is room: the one road a boundary takes. False when it is neither: no
  // daemon (the step belongs to the outage, which the next Step's ledger
  // reports), or a backlog of a million boundaries.
  enum class Boundary { kStart, kStep, kGoodbye };
  bool SendBoundary(const v1::Request& request, Boundary boundary);
  // Fetches the config the daemon offers (at config_generation
  // `generation`) and makes it the config from `step` on. Returns false when
  // the daemon did not answer (the session asks again at the next step
  // boundary). REQUIRES: mu_ held.
  bool TakeUpOfferedConfig(uint32_t step, uint64_t generation);
  // Whether `step` is collected: the operator's live directive (tprobe
  // start/stop, read from the segment) when there is one, else the config's
  // step and rank lists. REQUIRES: mu_ held.
  bool Selected(uint32_t step) const;
  // What EmptyStep needs of the step that ends. REQUIRES: mu_ held.
  StepFacts Facts(uint32_t step) const;
  void UpdateCollecting();
  // The last configured step, when `step` is past it and Start() has not
  // said so yet (it says so once, setting ended_). REQUIRES: mu_ held.
  std::optional<int64_t> UnsaidEnd(uint32_t step) const;
  // Sends the Start boundary of `step`. REQUIRES: mu_ held.
  void SendStart(uint32_t step);
  // Step()'s body; an offered config is taken up only with
  // `take_up_config`. REQUIRES: mu_ held.
  void EndStep(uint64_t unclosed_calls, bool take_up_config);
  // Asks the daemon whether it ended this process's dump (overflow_check).
  bool DaemonEndedDump();
  // Whether an outermost API call of this step is open on this thread.
  bool InApi() const;
  // Whether level L1 records the module `base` (DumpAloneAtL1).
  bool DumpedAlone(std::string_view base);
  // Whether the parameter gradients of the module `module_base` are
  // recorded at all (BeginParamGrad's first test), and the plan of their
  // entry with K `index` (its second: false when the entry is not dumped).
  bool KeepsParamGrad(std::string_view module_base);
  bool PlanParamGrad(std::string_view module_base, uint32_t index,
                     CallPlan* plan);
  // Sends the name (and the CallBegin) the plan needs.
  void Publish(const ConfigVersion& version, CallPlan* plan,
               ApiSite* site = nullptr);
  // plan->name's id on this thread's ring (Recorder::Intern), kept in
  // `site` (nullptr: none) by plan->index.
  uint32_t InternName(const CallPlan& plan, ApiSite* site);
  // `site` made to hold for `version` (ApiSite), its API named `base`.
  void Refill(ConfigVersion& version, std::string_view base, ApiSite* site);
  // Writes the CallBegin of the running group if it has none yet.
  void OpenGroup(uint32_t step);
  // Writes the group's CallEnd if it has a CallBegin. REQUIRES: mu_ held.
  void CloseGroup();

  const std::string dump_path_;  // SessionOptions::dump_path
  const int rank_;
  const int connect_timeout_ms_;
  const bool risk_level_applies_;  // SessionOptions::risk_level_applies
  // Every config this session ran under, the newest last (guarded by mu_);
  // current_ points at the newest. Kept so that a reader holding an older one
  // (a hook on another thread, a config() reference) is never left with a
  // dangling one; a live config is rare and small.
  std::vector<std::unique_ptr<ConfigVersion>> versions_;
  std::atomic<ConfigVersion*> current_{nullptr};
  uint64_t config_generation_ = 0;  // the daemon's, last seen (mu_)
  // The generation the daemon offered for this rank's own Configure (mu_).
  uint64_t own_generation_ = 0;
  // A flush's write error was named on stderr (once).
  std::atomic<bool> write_error_reported_{false};
  Recorder recorder_;
  StepLedger ledger_;
  EmptyStep empty_;  // why a collected step wrote no entry
  std::unique_ptr<ControlChannel> channel_;
  // Steps whose Step record the daemon has not read yet, oldest
  // first (guarded by mu_): an outage may have begun with the first.
  std::deque<uint32_t> unacknowledged_;

  // Guards the lifecycle and the config swaps, never a hook event: running_,
  // started_, ended_, versions_, config_generation_, unacknowledged_, group_
  // and group_step_ (and the writes of group_name_id_). The per-call state
  // (indices_, the live Selection) is lock-free.
  std::mutex mu_;
  bool running_ = false;
  bool started_ = false;  // Start() was called in this step
  bool ended_ = false;
  CallIndices indices_;
  // The running group (BeginGroup), its interned name and step once its
  // CallBegin is written (name id 0 until then; read without mu_ so that
  // only the group's first call locks).
  std::atomic<bool> in_group_{false};
  std::string group_;
  std::atomic<uint32_t> group_name_id_{0};
  uint32_t group_step_ = 0;
  std::atomic<uint32_t> step_{0};
  // DumpAloneAtL1's modules, and their guard: looked at only by a module
  // call at level L1, where only these modules have hooks (module_dump).
  std::mutex alone_mu_;
  std::vector<std::string> alone_;
  // Bumped by Step(); an open outermost API call of an older generation is
  // forgotten, so a call whose end never came cannot mute a thread forever.
  std::atomic<uint64_t> generation_{1};
  std::atomic<bool> collecting_{false};
  std::atomic<bool> step_active_{false};
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_SESSION_H_
