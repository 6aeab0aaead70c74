#ifndef TPROBE_COMMON_DTYPE_H_
#define TPROBE_COMMON_DTYPE_H_

// Element types that cross the ring: their sizes and msprobe's names. The
// numeric values are part of the record format (common/record/record.h).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "client/include/tprobe/types.h"

namespace tprobe {

// The public header's TensorType (client/include/tprobe/types.h), under the
// core's name.
using DType = TensorType;
inline constexpr int kDTypeCount = kTensorTypeCount;

// Bytes per element.
constexpr size_t ElementSize(DType t) {
  switch (t) {
    case DType::kFloat32:
      return 4;
    case DType::kFloat16:
      return 2;
    case DType::kBFloat16:
      return 2;
    case DType::kFloat64:
      return 8;
    case DType::kInt8:
      return 1;
    case DType::kUInt8:
      return 1;
    case DType::kInt16:
      return 2;
    case DType::kInt32:
      return 4;
    case DType::kInt64:
      return 8;
    case DType::kBool:
      return 1;
    case DType::kComplex64:
      return 8;
    case DType::kComplex128:
      return 16;
  }
  return 0;
}

// The dtype string msprobe writes for a PyTorch tensor ("torch.float32").
constexpr std::string_view TorchName(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "torch.float32";
    case DType::kFloat16:
      return "torch.float16";
    case DType::kBFloat16:
      return "torch.bfloat16";
    case DType::kFloat64:
      return "torch.float64";
    case DType::kInt8:
      return "torch.int8";
    case DType::kUInt8:
      return "torch.uint8";
    case DType::kInt16:
      return "torch.int16";
    case DType::kInt32:
      return "torch.int32";
    case DType::kInt64:
      return "torch.int64";
    case DType::kBool:
      return "torch.bool";
    case DType::kComplex64:
      return "torch.complex64";
    case DType::kComplex128:
      return "torch.complex128";
  }
  return "";
}

// Inverse of TorchName; nullopt for an unknown name.
inline std::optional<DType> DTypeFromTorchName(std::string_view name) {
  for (int i = 0; i < kDTypeCount; ++i) {
    auto t = static_cast<DType>(i);
    if (TorchName(t) == name) return t;
  }
  return std::nullopt;
}

// The dtype string msprobe writes for a MindSpore tensor, str() of the
// mindspore dtype ("Float32", "BFloat16", "Bool").
constexpr std::string_view MindSporeName(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "Float32";
    case DType::kFloat16:
      return "Float16";
    case DType::kBFloat16:
      return "BFloat16";
    case DType::kFloat64:
      return "Float64";
    case DType::kInt8:
      return "Int8";
    case DType::kUInt8:
      return "UInt8";
    case DType::kInt16:
      return "Int16";
    case DType::kInt32:
      return "Int32";
    case DType::kInt64:
      return "Int64";
    case DType::kBool:
      return "Bool";
    case DType::kComplex64:
      return "Complex64";
    case DType::kComplex128:
      return "Complex128";
  }
  return "";
}

// Inverse of MindSporeName; nullopt for an unknown name.
inline std::optional<DType> DTypeFromMindSporeName(std::string_view name) {
  for (int i = 0; i < kDTypeCount; ++i) {
    auto t = static_cast<DType>(i);
    if (MindSporeName(t) == name) return t;
  }
  return std::nullopt;
}

constexpr bool IsValidDType(uint8_t raw) { return raw < kDTypeCount; }

}  // namespace tprobe

#endif  // TPROBE_COMMON_DTYPE_H_
