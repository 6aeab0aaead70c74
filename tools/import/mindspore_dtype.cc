#include "tools/import/mindspore_dtype.h"

#include <utility>

#include "common/dtype.h"

namespace tprobe::import {

std::string MindSporeDTypeName(std::string_view numpy_name) {
  // msprobe maps the name to a mindspore dtype object and writes str() of
  // it. numpy's aliases first become their canonical names.
  static constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
      {"byte", "int8"},      {"short", "int16"},    {"intc", "int32"},
      {"intp", "int64"},     {"ubyte", "uint8"},    {"ushort", "uint16"},
      {"uintc", "uint32"},   {"uintp", "uint64"},   {"half", "float16"},
      {"single", "float32"}, {"double", "float64"},
  };
  for (const auto& [alias, canonical] : kAliases) {
    if (alias == numpy_name) {
      numpy_name = canonical;
      break;
    }
  }
  if (auto dtype = DTypeWhere(&DTypeInfo::numpy, numpy_name)) {
    return std::string(MindSporeName(*dtype));
  }
  // Unsigned types wider than a byte, which no tensor of the ring has.
  static constexpr std::pair<std::string_view, std::string_view> kOthers[] = {
      {"uint16", "UInt16"}, {"uint32", "UInt32"}, {"uint64", "UInt64"}};
  for (const auto& [numpy, mindspore] : kOthers) {
    if (numpy == numpy_name) return std::string(mindspore);
  }
  return "None";
}

}  // namespace tprobe::import
