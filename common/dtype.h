#ifndef TPROBE_COMMON_DTYPE_H_
#define TPROBE_COMMON_DTYPE_H_

// Element types that cross the ring: their sizes, msprobe's names and
// numpy's, in one table (kDTypes). The numeric values are part of the
// record format (common/record/record.h).

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>

#include "tprobe/types.h"

namespace tprobe {

// The public header's TensorType (include/tprobe/types.h), under the
// core's name.
using DType = TensorType;
inline constexpr int kDTypeCount = kTensorTypeCount;

// What tprobe knows of each element type: one row per type, at the index of
// its value. Every other place that needs one of these facts reads it here.
struct DTypeInfo {
  DType dtype;
  size_t size;  // bytes per element
  // The dtype strings msprobe writes: for a PyTorch tensor ("torch.float32"),
  // and for a MindSpore tensor, str() of the mindspore dtype ("Float32").
  std::string_view torch;
  std::string_view mindspore;
  // numpy's name of the type ("float32"), as tensor file names carry it.
  std::string_view numpy;
  // The descr of the .npy file tprobe writes for it ("<f4"); bfloat16, which
  // numpy lacks, is written as its float32 upcast.
  std::string_view npy_descr;
};

inline constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat32, 4, "torch.float32", "Float32", "float32", "<f4"},
    {DType::kFloat16, 2, "torch.float16", "Float16", "float16", "<f2"},
    {DType::kBFloat16, 2, "torch.bfloat16", "BFloat16", "bfloat16", "<f4"},
    {DType::kFloat64, 8, "torch.float64", "Float64", "float64", "<f8"},
    {DType::kInt8, 1, "torch.int8", "Int8", "int8", "|i1"},
    {DType::kUInt8, 1, "torch.uint8", "UInt8", "uint8", "|u1"},
    {DType::kInt16, 2, "torch.int16", "Int16", "int16", "<i2"},
    {DType::kInt32, 4, "torch.int32", "Int32", "int32", "<i4"},
    {DType::kInt64, 8, "torch.int64", "Int64", "int64", "<i8"},
    {DType::kBool, 1, "torch.bool", "Bool", "bool", "|b1"},
    {DType::kComplex64, 8, "torch.complex64", "Complex64", "complex64", "<c8"},
    {DType::kComplex128, 16, "torch.complex128", "Complex128", "complex128",
     "<c16"},
};
static_assert(std::size(kDTypes) == kDTypeCount);
static_assert(
    [] {
      for (int i = 0; i < kDTypeCount; ++i) {
        if (static_cast<int>(kDTypes[i].dtype) != i) return false;
      }
      return true;
    }(),
    "kDTypes: each row sits at the index of its type's value");

constexpr bool IsValidDType(uint8_t raw) { return raw < kDTypeCount; }

// The elements of a tensor of `shape` (1 for a scalar's empty shape).
// REQUIRES: no dimension is negative.
inline size_t ElementCount(std::span<const int64_t> shape) {
  size_t n = 1;
  for (int64_t d : shape) {
    assert(d >= 0 && "ElementCount: negative dimension");
    n *= static_cast<size_t>(d);
  }
  return n;
}

// The row of `t`; nullptr for a value outside the enum.
constexpr const DTypeInfo* InfoOf(DType t) {
  const auto i = static_cast<uint8_t>(t);
  return IsValidDType(i) ? &kDTypes[i] : nullptr;
}

// Bytes per element (0 for a value outside the enum).
constexpr size_t ElementSize(DType t) {
  const DTypeInfo* info = InfoOf(t);
  return info ? info->size : 0;
}

// The dtype string msprobe writes for a PyTorch tensor ("torch.float32").
constexpr std::string_view TorchName(DType t) {
  const DTypeInfo* info = InfoOf(t);
  return info ? info->torch : "";
}

// The dtype string msprobe writes for a MindSpore tensor, str() of the
// mindspore dtype ("Float32", "BFloat16", "Bool").
constexpr std::string_view MindSporeName(DType t) {
  const DTypeInfo* info = InfoOf(t);
  return info ? info->mindspore : "";
}

// The first type (in value order) whose `field` is `value`; nullopt for
// none. For example DTypeWhere(&DTypeInfo::numpy, "float32").
inline std::optional<DType> DTypeWhere(std::string_view DTypeInfo::*field,
                                       std::string_view value) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.*field == value) return info.dtype;
  }
  return std::nullopt;
}

// Inverses of TorchName and MindSporeName; nullopt for an unknown name.
inline std::optional<DType> DTypeFromTorchName(std::string_view name) {
  return DTypeWhere(&DTypeInfo::torch, name);
}
inline std::optional<DType> DTypeFromMindSporeName(std::string_view name) {
  return DTypeWhere(&DTypeInfo::mindspore, name);
}

}  // namespace tprobe

#endif  // TPROBE_COMMON_DTYPE_H_
