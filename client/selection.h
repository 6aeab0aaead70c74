#ifndef TPROBE_CLIENT_SELECTION_H_
#define TPROBE_CLIENT_SELECTION_H_

// Which calls are dumped, and which of their data: msprobe's step, rank, scope,
// list and data_mode filters (docs/format.md, section 6.2), applied in the
// client core so that every framework adapter gets them. The rules are msprobe
// 26.x's RangeScope classes, driven by the same events in the same order as
// msprobe's hooks drive them:
//
//   module call (forward or backward):  BeginModule, Check at its start,
//                                       [its children], Check at its end,
//                                       EndModule
//   API call, forward:                  Check at its start, Check at its end
//   API call, backward:                 Check
//   parameter gradient:                 ParamGrad
//
// Check(name) is msprobe's scope.check: whether what is collected at that
// point is dumped (the inputs and the stack at a call's start; the outputs
// and parameters at its end; everything of a backward call). Its rules, by
// the kind of range the config gives (msprobe's ScopeFactory):
// - list only, or an API scope (levels L0 and L1): a call passes when one of
//   the list strings is a substring of its full name (an empty list passes
//   every name). With scope = [start, end] it must also be inside the range,
//   which opens when `start` is checked and closes right after `end` is
//   checked; so the end API call keeps its inputs but not its outputs (its
//   second check comes after the range closed).
// - a module scope (level L0): the range opens when module call `start`
//   begins and closes when module call `end` ends; a call passes when it is
//   checked inside the range and matches the list.
// - level mix: both rules at once. In addition a module call whose name
//   contains a list string opens a list range for as long as it runs: every
//   call checked inside it passes the list.
// A backward call has its own name (X.backward.N), so it is dumped only when
// it is itself named or runs inside an open range; the forward call being
// selected does not select its backward.
//
// - risk_level (PyTorch, levels L1 and mix, neither scope nor list given):
//   an API call passes when its risk passes the level (risk_level.h), at
//   every check; module calls always pass.
//
// - data_mode: which keys an entry keeps (Keeps); the filters above decide
//   nothing about it.
//
// Calls are counted and named whether or not they are dumped (naming.h), so
// names never depend on the filters. The ranges and the record of module
// backward entries start again at every step.
//
// Thread safety: every method may be called from any thread at the same
// time, without a lock (the hooks of a step call it from the training
// thread and from autograd threads). The range state is atomics: whether
// the scope range is open, and at level mix how many list-opening module
// calls run. A count stands for msprobe's set of such calls' names because
// a name is never open twice at once: it carries the call's index (a
// forward call's is new, a backward call reuses its own forward's, and runs
// once per forward). EndModule lowers the count only for a name that raised
// it, and never below 0; a module call that began before ResetStep and
// ends after it (msprobe has none: step() runs outside the model's forward
// and backward) closes a list range of the new step early instead of
// nothing. The record of backward entries is a TextTable of epoch-tagged
// words (naming.h), so a warm call allocates nothing. Calls of threads that
// run at the same time see the ranges in the order their checks happen to
// run, as with one lock around each check; risk_level alone (no scope, no
// list) keeps no state at all.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/naming.h"
#include "common/config/config.h"

namespace tprobe::client {

class Selection {
 public:
  // Takes the filters of a validated config (scope empty or of size 2) for
  // a session whose framework's API calls risk_level filters or not
  // (msprobe filters PyTorch's).
  Selection(const config::Config& config, bool risk_level_applies);

  // True when every check passes (neither scope, list nor risk_level
  // filters), so the methods below need not be called.
  bool everything() const { return everything_; }
  static bool Everything(const config::Config& config, bool risk_level_applies);
  // True when risk_level alone filters (neither scope nor list): Check is
  // then a pure function of the name, so a second check of one call gives
  // the first's answer.
  bool by_risk_level() const { return by_risk_level_; }

  bool StepSelected(int64_t step) const;
  bool RankSelected(int64_t rank) const;

  // data_mode: whether the inputs (else outputs) of forward (else backward)
  // calls are kept.
  bool Keeps(bool forward, bool input) const {
    return config::DataModeSelected(data_mode_, forward, input);
  }
  // Whether anything of forward (else backward) calls is kept.
  bool KeepsDirection(bool forward) const {
    return Keeps(forward, true) || Keeps(forward, false);
  }

  // A module call (forward or backward) named `name` begins or ends.
  void BeginModule(std::string_view name);
  void EndModule(std::string_view name);

  // msprobe's scope.check(name); see above.
  bool Check(std::string_view name);

  // Whether a gradient of a parameter of the module `module_base`
  // ("Module.{path}.{Class}") is dumped: the base itself passes Check, or
  // a backward call of the module wrote an entry in this step.
  bool ParamGrad(std::string_view module_base);
  // The backward module call `name` ("{base}.backward.{N}") wrote an entry.
  void NoteBackwardEntry(std::string_view name);

  // Closes the ranges and forgets the backward entries (at step()).
  void ResetStep();

 private:
  // msprobe's three RangeScope classes.
  enum class Kind { kApi, kModule, kMix };

  // Whether one of the list strings is in `name` (true for an empty list).
  bool Listed(std::string_view name) const;
  // Whether the module call `name` opens a list range (level mix).
  bool OpensListRange(std::string_view name) const;

  config::Config config_;  // steps and ranks
  config::DataMode data_mode_;
  bool has_scope_;
  // Neither scope nor list: the risk level alone decides.
  bool by_risk_level_;
  config::RiskLevel risk_level_;
  bool everything_;
  Kind kind_ = Kind::kApi;
  std::string scope_start_, scope_end_;
  std::vector<std::string> list_;

  std::atomic<bool> in_scope_{false};
  // Level mix: how many running module calls opened a list range.
  std::atomic<uint32_t> list_openers_{0};
  // By module base: the step word (epoch, 1) of its last backward entry.
  TextTable<std::atomic<uint64_t>> backward_entries_;
  std::atomic<uint64_t> epoch_{1};  // bumped by ResetStep
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_SELECTION_H_
