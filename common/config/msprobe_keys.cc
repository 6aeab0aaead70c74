#include "common/config/msprobe_keys.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tprobe::config {
namespace {

// The rows of TPROBE_MSPROBE_KEYS, and each section's rules taken from them.
#define TPROBE_MSPROBE_RULE_(sections, key, use, why) \
  {sections, {#key, KeyUse::use, why}},
constexpr SectionRule kRows[] = {TPROBE_MSPROBE_KEYS(TPROBE_MSPROBE_RULE_)};
#undef TPROBE_MSPROBE_RULE_

template <uint32_t section>
constexpr auto kRules = RulesOf<section, CountRules<section>(kRows)>(kRows);

// Optimal string alignment distance (Levenshtein plus swaps of neighbours),
// capped: anything above kMax comes back as kMax + 1.
size_t EditDistance(std::string_view a, std::string_view b) {
  constexpr size_t kMax = 2;
  const size_t gap =
      a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (gap > kMax) return kMax + 1;
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return std::min(d[a.size()][b.size()], kMax + 1);
}

}  // namespace

KeyRules TopLevelKeys() { return kRules<kTopLevel>; }

KeyRules SectionKeys(std::string_view task_name) {
  if (task_name == "statistics") return kRules<kStatisticsSection>;
  if (task_name == "tensor") return kRules<kTensorSection>;
  if (task_name == "overflow_check") return kRules<kOverflowCheckSection>;
  if (task_name == "structure") return kRules<kStructureSection>;
  return {};
}

const KeyRule* FindRule(KeyRules rules, std::string_view key) {
  for (const KeyRule& rule : rules) {
    if (rule.key == key) return &rule;
  }
  return nullptr;
}

std::string_view NearestKey(KeyRules rules, std::string_view key) {
  std::string_view best;
  size_t best_distance = 3;
  for (const KeyRule& rule : rules) {
    if (rule.use == KeyUse::kRefused) continue;  // no help to suggest
    const size_t distance = EditDistance(key, rule.key);
    // A one- or two-letter key is never "near" a different word.
    if (distance < best_distance && distance < rule.key.size() &&
        distance < key.size()) {
      best = rule.key;
      best_distance = distance;
    }
  }
  return best;
}

const char* UnsupportedTaskReason(std::string_view task) {
  if (task == "acc_check" || task == "run_ut") {
    return "msprobe's online accuracy checker (task acc_check, formerly "
           "run_ut) is not supported by tprobe";
  }
  if (task == "exception_dump") {
    return "msprobe's exception dump (task exception_dump, MindSpore "
           "static graph) is not supported by tprobe";
  }
  if (task == "nan_check") {
    return "msprobe's NPU NaN check (task nan_check) is not supported by "
           "tprobe; task overflow_check dumps the calls whose outputs hold "
           "NaN or Inf";
  }
  if (task == "diff_check") {
    return "msprobe's bench comparison at dump time (task diff_check) is "
           "not supported by tprobe; dump both runs and use `tprobe "
           "compare`";
  }
  if (task == "free_benchmark") {
    return "msprobe's free benchmark (task free_benchmark) is not "
           "supported by tprobe";
  }
  if (task == "grad_probe") {
    return "msprobe's gradient monitor (task grad_probe) is not supported "
           "by tprobe";
  }
  return nullptr;
}

const char* UnsupportedLevelReason(std::string_view level) {
  if (level == "L2") {
    return "msprobe's kernel dump (level L2) is not supported by tprobe";
  }
  return nullptr;
}

}  // namespace tprobe::config
