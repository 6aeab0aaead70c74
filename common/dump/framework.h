#ifndef TPROBE_COMMON_DUMP_FRAMEWORK_H_
#define TPROBE_COMMON_DUMP_FRAMEWORK_H_

// What msprobe's dump does differently for each framework it dumps: how a
// tensor is written into dump.json and whose statistics rules apply
// (common/stats/tensor_stats.h). A producer names its framework when it
// registers; the daemon looks the framework up then, once, and refuses a
// name it has no entry for.

#include <string_view>

#include "common/dtype.h"
#include "common/stats/tensor_stats.h"

namespace tprobe::dump {

struct Framework {
  // msprobe's name, as registered and as dump.json's "framework".
  std::string_view name;
  // A tensor object's "type".
  std::string_view tensor_type;
  // A tensor object's "dtype".
  std::string_view (*dtype_name)(DType);
  // msprobe's MindSpore dump writes no "requires_grad".
  bool writes_requires_grad;
  stats::StatRules stat_rules;
};

inline constexpr Framework kPyTorch{"pytorch", "torch.Tensor", TorchName, true,
                                    stats::StatRules::kPyTorch};
inline constexpr Framework kMindSpore{"mindspore", "mindspore.Tensor",
                                      MindSporeName, false,
                                      stats::StatRules::kMindSpore};

// The framework msprobe calls `name`, or nullptr for one it has no dump
// for.
constexpr const Framework* FindFramework(std::string_view name) {
  for (const Framework* f : {&kPyTorch, &kMindSpore}) {
    if (f->name == name) return f;
  }
  return nullptr;
}

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_FRAMEWORK_H_
