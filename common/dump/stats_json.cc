#include "common/dump/stats_json.h"

#include <type_traits>
#include <variant>

namespace tprobe::dump {
namespace {

Json StatJson(const stats::Stat& stat) {
  return std::visit(
      [](auto v) -> Json {
        if constexpr (std::is_same_v<decltype(v), std::monostate>) {
          return nullptr;
        } else {
          return v;
        }
      },
      stat);
}

}  // namespace

void AppendStats(const stats::TensorStats& stats, Json* tensor) {
  Json& out = *tensor;
  out["Max"] = StatJson(stats.max);
  out["Min"] = StatJson(stats.min);
  out["Mean"] = StatJson(stats.mean);
  out["Norm"] = StatJson(stats.norm);
}

}  // namespace tprobe::dump
