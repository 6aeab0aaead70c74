#ifndef TPROBE_CLIENT_SELECTION_H_
#define TPROBE_CLIENT_SELECTION_H_

// Which calls are dumped, and which of their data: msprobe's step, rank,
// scope, list and data_mode filters (reference/msprobe-format.md, section
// 6.2), applied in the client core so that every framework adapter gets
// them. The rules are msprobe 26.x's RangeScope classes, driven by the same
// events in the same order as msprobe's hooks drive them:
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
// Thread safety: none; the Session guards it.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/config/config.h"

namespace tprobe::client {

class Selection {
 public:
  // Takes the filters of a validated config (scope empty or of size 2) for
  // a session of `framework` ("pytorch", "mindspore").
  Selection(const config::Config& config, std::string_view framework);

  // True when every check passes (neither scope, list nor risk_level
  // filters), so the methods below need not be called.
  bool everything() const { return everything_; }
  static bool Everything(const config::Config& config,
                         std::string_view framework);

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
  void BeginModule(const std::string& name);
  void EndModule(const std::string& name);

  // msprobe's scope.check(name); see above.
  bool Check(const std::string& name);

  // Whether a gradient of a parameter of the module `module_base`
  // ("Module.{path}.{Class}") is dumped: the base itself passes Check, or
  // a backward call of the module wrote an entry in this step.
  bool ParamGrad(const std::string& module_base);
  // The backward module call `name` ("{base}.backward.{N}") wrote an entry.
  void NoteBackwardEntry(const std::string& name);

  // Closes the ranges and forgets the backward entries (at step()).
  void ResetStep();

 private:
  // msprobe's three RangeScope classes.
  enum class Kind { kApi, kModule, kMix };

  bool Listed(const std::string& name) const;

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

  bool in_scope_ = false;
  // Level mix: the running module calls whose names matched the list.
  std::unordered_set<std::string> list_openers_;
  std::unordered_set<std::string> backward_entries_;
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_SELECTION_H_
