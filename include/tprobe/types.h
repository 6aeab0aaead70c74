#ifndef TPROBE_INCLUDE_TPROBE_TYPES_H_
#define TPROBE_INCLUDE_TPROBE_TYPES_H_

// The enums that libtprobe's public header (tprobe/client.h) and tprobe's
// core share: one definition each. The core takes them as they are
// (common/dtype.h's DType is TensorType; the ring's record::Direction and the
// naming's client::ModuleStyle are these), so a value passes the library
// boundary without a conversion. Their numeric values are part of the ring
// record format (common/record/record.h): never renumber, only append.
//
// C++17, no dependencies: this header is installed with client.h.

#include <cstdint>

namespace tprobe {

// Tensor element types.
enum class TensorType : uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kBFloat16 = 2,
  kFloat64 = 3,
  kInt8 = 4,
  kUInt8 = 5,
  kInt16 = 6,
  kInt32 = 7,
  kInt64 = 8,
  kBool = 9,
  kComplex64 = 10,
  kComplex128 = 11,
};
inline constexpr int kTensorTypeCount = 12;

// Where a value goes in its entry. Forward calls: kInput appends to
// input_args (positional), kOutput to output, kParameter to parameters
// (modules only). Backward calls: kInput and kOutput are msprobe's backward
// "input" (the gradients of the forward outputs) and "output" (the gradients
// of the forward inputs, null for an input that takes none).
enum class Section : uint8_t { kInput = 0, kOutput = 1, kParameter = 2 };

enum class Direction : uint8_t { kForward = 0, kBackward = 1 };

// How module names start: PyTorch's "Module." or MindSpore's "Cell.".
enum class ModuleStyle : uint8_t { kModule = 0, kCell = 1 };

// The record format fixes these values.
static_assert(static_cast<int>(TensorType::kFloat32) == 0 &&
              static_cast<int>(TensorType::kFloat16) == 1 &&
              static_cast<int>(TensorType::kBFloat16) == 2 &&
              static_cast<int>(TensorType::kFloat64) == 3 &&
              static_cast<int>(TensorType::kInt8) == 4 &&
              static_cast<int>(TensorType::kUInt8) == 5 &&
              static_cast<int>(TensorType::kInt16) == 6 &&
              static_cast<int>(TensorType::kInt32) == 7 &&
              static_cast<int>(TensorType::kInt64) == 8 &&
              static_cast<int>(TensorType::kBool) == 9 &&
              static_cast<int>(TensorType::kComplex64) == 10 &&
              static_cast<int>(TensorType::kComplex128) == 11 &&
              static_cast<int>(TensorType::kComplex128) + 1 ==
                  kTensorTypeCount);
static_assert(static_cast<int>(Section::kInput) == 0 &&
              static_cast<int>(Section::kOutput) == 1 &&
              static_cast<int>(Section::kParameter) == 2);
static_assert(static_cast<int>(Direction::kForward) == 0 &&
              static_cast<int>(Direction::kBackward) == 1);
static_assert(static_cast<int>(ModuleStyle::kModule) == 0 &&
              static_cast<int>(ModuleStyle::kCell) == 1);

}  // namespace tprobe

#endif  // TPROBE_INCLUDE_TPROBE_TYPES_H_
