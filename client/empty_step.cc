#include "client/empty_step.h"

#include <cstdio>
#include <string>

namespace tprobe::client {
namespace {

// The causes said on stderr so far in this process, one bit per cause (the
// v1::EmptyCause value; bit 0 is the rank's).
std::atomic<uint32_t> g_said{0};

constexpr uint32_t kRankBit = 1u;

// Whether `bit` is said for the first time now.
bool FirstTime(uint32_t bit) {
  return (g_said.fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
}

void Say(v1::EmptyCause cause, const StepFacts& facts) {
  if (cause == v1::EMPTY_CAUSE_NO_MODEL || !FirstTime(1u << cause)) return;
  const char* why = "";
  switch (cause) {
    case v1::EMPTY_CAUSE_SCOPE_LIST:
      why =
          "config.json's \"scope\"/\"list\" matched none of the calls that "
          "ran";
      break;
    case v1::EMPTY_CAUSE_RISK_LEVEL:
      why = "config.json's \"risk_level\" kept none of the API calls that ran";
      break;
    case v1::EMPTY_CAUSE_NO_API:
      why =
          "level L1 dumps API calls and none ran between start() and stop() "
          "(outside a model's hooks, or before its API hooks were installed)";
      break;
    case v1::EMPTY_CAUSE_NO_CALLS:
      why = facts.level == config::Level::kMix
                ? "no module or API call ran between start() and stop()"
                : "no module call ran between start() and stop()";
      break;
    default:
      return;
  }
  // A rank of -1 (not distributed) writes into "rank/".
  const std::string rank =
      facts.rank < 0 ? "" : " of rank " + std::to_string(facts.rank);
  std::fprintf(stderr, "[tprobe] step %u%s wrote no entry: %s%s (said once)\n",
               facts.step, rank.c_str(), why,
               facts.daemon ? "; its tprobe.json says why_empty" : "");
}

}  // namespace

v1::EmptyCause EmptyStep::Close(const StepFacts& facts) {
  const bool saw_call = saw_call_.exchange(false, std::memory_order_relaxed);
  const bool wrote_entry =
      wrote_entry_.exchange(false, std::memory_order_relaxed);
  const bool no_model = no_model_.exchange(false, std::memory_order_relaxed);
  if (!facts.started || !facts.step_selected ||
      facts.level == config::Level::kDebug) {
    return v1::EMPTY_CAUSE_UNSPECIFIED;
  }
  if (!facts.rank_selected) {
    if (FirstTime(kRankBit)) {
      std::fprintf(stderr,
                   "[tprobe] rank %d is not in config.json's \"rank\" list: "
                   "it dumps nothing and writes no step folder (said once)\n",
                   facts.rank);
    }
    return v1::EMPTY_CAUSE_UNSPECIFIED;
  }
  if (wrote_entry) return v1::EMPTY_CAUSE_UNSPECIFIED;
  v1::EmptyCause cause;
  if (saw_call) {
    if (!facts.filtered) return v1::EMPTY_CAUSE_UNSPECIFIED;
    cause = facts.by_risk_level ? v1::EMPTY_CAUSE_RISK_LEVEL
                                : v1::EMPTY_CAUSE_SCOPE_LIST;
  } else if (no_model && facts.level != config::Level::kL1) {
    cause = v1::EMPTY_CAUSE_NO_MODEL;
  } else if (facts.level == config::Level::kL1) {
    cause = v1::EMPTY_CAUSE_NO_API;
  } else {
    cause = v1::EMPTY_CAUSE_NO_CALLS;
  }
  Say(cause, facts);
  return cause;
}

}  // namespace tprobe::client
