#ifndef TPROBE_CLIENT_SELECTION_H_
#define TPROBE_CLIENT_SELECTION_H_

// Which calls are dumped, and which of their data: msprobe's step, rank,
// scope, list and data_mode filters (reference/msprobe-format.md, section
// 6.2; msprobe's RangeScope classes), applied in the client core so that
// every framework adapter gets them.
//
// - step, rank: a step (rank) is dumped when the list is empty or holds it.
// - list: a call is dumped when one of the strings is a substring of its
//   full name. At level mix a module call whose name matches opens the list
//   range: every call that begins while it is open is dumped too (msprobe's
//   MixRangeScope). At L0 and L1 each name must match by itself.
// - scope = [start, end]: the range opens when the call named `start` begins
//   and closes when the call named `end` ends. For an API call begin and end
//   are the same moment; a module call ends after everything called inside
//   it, so scope [M, M] selects module M and all its children. A call is
//   dumped when it begins inside the range (and passes the list). Unlike
//   msprobe, a module is judged when it begins rather than in its post-hook,
//   so a parent module of `start` is never pulled into the range.
// - backward calls and parameter gradients: dumped when their forward call
//   was (for gradients: any forward call of the module in this step), or
//   when they pass the filters by their own name when they run.
// - data_mode: which keys an entry keeps (Keeps); a call whose direction
//   keeps nothing writes no entry, but it is still counted and named.
//
// Calls are counted and named whether or not they are dumped (naming.h), so
// names never depend on the filters. The ranges and the sets of dumped calls
// start again at every step.
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
  // Takes the filters of a validated config (scope empty or of size 2).
  explicit Selection(const config::Config& config);

  // True when neither scope nor list is configured: every call is dumped and
  // the methods below return true without keeping any state.
  bool everything() const { return everything_; }

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

  // A forward module call named `name` begins; `base` is its module's name
  // base (naming.h). Returns whether it is dumped. Every module call, forward
  // or backward, must later be ended with EndModule.
  bool BeginModuleForward(std::string_view base, const std::string& name);
  // A backward module call begins; `forward_name` names its forward call.
  bool BeginModuleBackward(const std::string& name,
                           const std::string& forward_name);
  void EndModule(const std::string& name);

  // A forward (backward) API call; API calls open and close at once.
  bool ApiForward(const std::string& name);
  bool ApiBackward(const std::string& name, const std::string& forward_name);

  // A parameter gradient entry `name` of the module with `module_base`.
  bool ParamGrad(std::string_view module_base, const std::string& name);

  // Closes the ranges and forgets the dumped calls (at step()).
  void ResetStep();

 private:
  bool Listed(const std::string& name) const;
  // In range and in the list, given the current state.
  bool Passes(const std::string& name) const;
  void OpenByName(const std::string& name, bool module);

  const config::Config config_;  // steps and ranks
  const config::DataMode data_mode_;
  const bool mix_;
  const bool has_scope_;
  const bool everything_;
  std::string scope_start_, scope_end_;
  std::vector<std::string> list_;

  bool in_scope_ = false;
  // Open module calls whose names matched the list (level mix only).
  std::vector<std::string> list_openers_;
  // Forward calls dumped in this step, and the bases of their modules.
  std::unordered_set<std::string> dumped_forward_;
  std::unordered_set<std::string> dumped_modules_;
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_SELECTION_H_
