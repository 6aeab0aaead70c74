#include "daemon/import/mindspore_dtype.h"

#include <utility>

namespace tprobe::import {

std::string MindSporeDTypeName(std::string_view numpy_name) {
  // msprobe maps the name to a mindspore dtype object and writes str() of
  // it; this table is that composition.
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"bool", "Bool"},           {"int8", "Int8"},
      {"byte", "Int8"},           {"int16", "Int16"},
      {"short", "Int16"},         {"int32", "Int32"},
      {"intc", "Int32"},          {"int64", "Int64"},
      {"intp", "Int64"},          {"uint8", "UInt8"},
      {"ubyte", "UInt8"},         {"uint16", "UInt16"},
      {"ushort", "UInt16"},       {"uint32", "UInt32"},
      {"uintc", "UInt32"},        {"uint64", "UInt64"},
      {"uintp", "UInt64"},        {"float16", "Float16"},
      {"half", "Float16"},        {"float32", "Float32"},
      {"single", "Float32"},      {"float64", "Float64"},
      {"double", "Float64"},      {"bfloat16", "BFloat16"},
      {"complex64", "Complex64"}, {"complex128", "Complex128"},
  };
  for (const auto& [numpy, mindspore] : kNames) {
    if (numpy == numpy_name) return std::string(mindspore);
  }
  return "None";
}

}  // namespace tprobe::import
