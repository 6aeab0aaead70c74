#include "common/config/msprobe_keys.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tprobe::config {
namespace {

constexpr std::string_view kAtb =
    "msprobe's ATB dump (its config has a top-level 'device' key) is not "
    "supported by tprobe; use a PyTorch or MindSpore config.json";

constexpr std::string_view kSlice =
    "tprobe dumps whole tensors, not slices of them";
constexpr std::string_view kRequestId =
    "it selects an inference request; tprobe dumps every call";
constexpr std::string_view kDiffCheck =
    "it is diff_check's; tprobe does not run diff_check";

constexpr KeyRule kTopLevel[] = {
    {"task", KeyUse::kActed, ""},
    {"dump_path", KeyUse::kActed, ""},
    {"rank", KeyUse::kActed, ""},
    {"step", KeyUse::kActed, ""},
    {"level", KeyUse::kActed, ""},
    {"risk_level", KeyUse::kActed, ""},
    {"dump_enable", KeyUse::kActed, ""},
    {"statistics", KeyUse::kActed, ""},
    {"tensor", KeyUse::kActed, ""},
    {"overflow_check", KeyUse::kActed, ""},
    {"structure", KeyUse::kActed, ""},
    {"tprobe", KeyUse::kActed, ""},
    {"async_dump", KeyUse::kChecked, ""},
    {"extra_info", KeyUse::kChecked,
     "tprobe always writes stack.json and construct.json"},
    {"precision", KeyUse::kChecked,
     "tprobe computes each statistic one way whatever precision says "
     "(docs/format.md)"},
    {"enable_dataloader", KeyUse::kChecked,
     "call start(), stop() and step() in the training loop (msprobe "
     "deprecates the key too)"},
    {"custom_op_namespaces", KeyUse::kIgnored,
     "tprobe does not hook torch.ops namespaces (NPU custom operators)"},
    {"acl_config", KeyUse::kIgnored,
     "it configures msprobe's Ascend ACL dump, which tprobe does not run"},
    {"seed", KeyUse::kIgnored,
     "tprobe does not seed from config.json; call "
     "tprobe.torch.seed_all(seed=..., mode=...)"},
    {"is_deterministic", KeyUse::kIgnored,
     "tprobe does not set deterministic algorithms from config.json; call "
     "tprobe.torch.seed_all(seed=..., mode=True)"},
    {"load", KeyUse::kRefused,
     "replacing module inputs with previously dumped tensors (msprobe's "
     "'load' section) is not supported by tprobe; remove the section"},
    {"device", KeyUse::kRefused, kAtb},
    {"exec_range", KeyUse::kRefused, kAtb},
    {"ids", KeyUse::kRefused, kAtb},
    {"op_name", KeyUse::kRefused, kAtb},
    {"save_child", KeyUse::kRefused, kAtb},
    {"filter_level", KeyUse::kRefused, kAtb},
    {"acc_check", KeyUse::kSection, ""},
    {"diff_check", KeyUse::kSection, ""},
    {"nan_check", KeyUse::kSection, ""},
    {"exception_dump", KeyUse::kSection, ""},
    {"run_ut", KeyUse::kSection, ""},
    {"grad_probe", KeyUse::kSection, ""},
    {"free_benchmark", KeyUse::kSection, ""},
};

// Each task section starts with the keys msprobe's BaseConfig reads in
// every section (spelled out in each table, as a constexpr table cannot be
// joined from two).
constexpr KeyRule kStatistics[] = {
    {"scope", KeyUse::kActed, ""},
    {"list", KeyUse::kActed, ""},
    {"data_mode", KeyUse::kActed, ""},
    {"slice", KeyUse::kIgnored, kSlice},
    {"request_id", KeyUse::kIgnored, kRequestId},
    {"diff_nums", KeyUse::kIgnored, kDiffCheck},
    {"summary_mode", KeyUse::kActed, ""},
    {"tensor_list", KeyUse::kActed, ""},
    {"device", KeyUse::kIgnored,
     "it is MindSpore static graph's; tprobe computes statistics where "
     "tprobe.statistics_on says"},
    {"precision", KeyUse::kIgnored,
     "it is MindSpore static graph's device statistics precision; tprobe "
     "computes each statistic one way"},
};
constexpr KeyRule kTensor[] = {
    {"scope", KeyUse::kActed, ""},
    {"list", KeyUse::kActed, ""},
    {"data_mode", KeyUse::kActed, ""},
    {"slice", KeyUse::kIgnored, kSlice},
    {"request_id", KeyUse::kIgnored, kRequestId},
    {"diff_nums", KeyUse::kIgnored, kDiffCheck},
    {"summary_mode", KeyUse::kActed, ""},
    {"file_format", KeyUse::kChecked,
     "tprobe writes .npy files ('bin' is MindSpore static graph's)"},
    {"bench_path", KeyUse::kIgnored, kDiffCheck},
};
constexpr KeyRule kOverflowCheck[] = {
    {"scope", KeyUse::kActed, ""},
    {"list", KeyUse::kActed, ""},
    {"data_mode", KeyUse::kActed, ""},
    {"slice", KeyUse::kIgnored, kSlice},
    {"request_id", KeyUse::kIgnored, kRequestId},
    {"diff_nums", KeyUse::kIgnored, kDiffCheck},
    {"overflow_nums", KeyUse::kActed, ""},
    {"check_mode", KeyUse::kChecked,
     "it is MindSpore static graph's (before 2.3); tprobe checks every "
     "dumped call's outputs"},
    {"summary_mode", KeyUse::kIgnored,
     "the overflow_check task writes statistics"},
};
constexpr KeyRule kStructure[] = {
    {"scope", KeyUse::kActed, ""},
    {"list", KeyUse::kActed, ""},
    {"data_mode", KeyUse::kActed, ""},
    {"slice", KeyUse::kIgnored, kSlice},
    {"request_id", KeyUse::kIgnored, kRequestId},
    {"diff_nums", KeyUse::kIgnored, kDiffCheck},
    {"summary_mode", KeyUse::kIgnored, "the structure task dumps no data"},
};

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

KeyRules TopLevelKeys() { return kTopLevel; }

KeyRules SectionKeys(std::string_view task_name) {
  if (task_name == "statistics") return kStatistics;
  if (task_name == "tensor") return kTensor;
  if (task_name == "overflow_check") return kOverflowCheck;
  if (task_name == "structure") return kStructure;
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
