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

void WriteStat(const stats::Stat& stat, JsonStreamWriter& writer) {
  std::visit(
      [&writer](auto v) {
        using T = decltype(v);
        if constexpr (std::is_same_v<T, std::monostate>) {
          writer.Null();
        } else if constexpr (std::is_same_v<T, bool>) {
          writer.Bool(v);
        } else if constexpr (std::is_floating_point_v<T>) {
          writer.Float(v);
        } else if constexpr (std::is_signed_v<T>) {
          writer.Int(v);
        } else {
          writer.Uint(v);
        }
      },
      stat);
}

}  // namespace

void WriteStats(const stats::TensorStats& stats, JsonStreamWriter& writer) {
  writer.Key("Max");
  WriteStat(stats.max, writer);
  writer.Key("Min");
  WriteStat(stats.min, writer);
  writer.Key("Mean");
  WriteStat(stats.mean, writer);
  writer.Key("Norm");
  WriteStat(stats.norm, writer);
}

void AppendStats(const stats::TensorStats& stats, Json* tensor) {
  Json& out = *tensor;
  out["Max"] = StatJson(stats.max);
  out["Min"] = StatJson(stats.min);
  out["Mean"] = StatJson(stats.mean);
  out["Norm"] = StatJson(stats.norm);
}

}  // namespace tprobe::dump
