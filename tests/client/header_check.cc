// Compiled (not run) by the test client_header_compiles_as_strict_cpp17:
// tprobe/client.h and every template in it, as a user's C++17 program under
// -Wall -Wextra -Wpedantic -Wconversion -Werror and more (tests/CMakeLists).
// With -DTPROBE_MISUSE=N it must NOT compile: each case is a mistake the
// header turns into a compile error.

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

#include "tprobe/client.h"

#ifndef TPROBE_MISUSE
#define TPROBE_MISUSE 0
#endif

#if !defined(TPROBE_VERSION_MAJOR) || !defined(TPROBE_VERSION_MINOR) ||  \
    !defined(TPROBE_VERSION_PATCH) || !defined(TPROBE_VERSION_STRING) || \
    !defined(TPROBE_ABI_VERSION)
#error "tprobe/client.h must define the TPROBE_VERSION_* macros"
#endif
#if defined(TPROBE_EXPORT_) || defined(TPROBE_EXPORT)
#error "the export macro must not leak into user code"
#endif
static_assert(TPROBE_VERSION == TPROBE_VERSION_MAJOR * 10000 +
                                    TPROBE_VERSION_MINOR * 100 +
                                    TPROBE_VERSION_PATCH);

namespace {

using tprobe::TensorType;
using tprobe::TensorTypeOf;
static_assert(TensorTypeOf<float>::value == TensorType::kFloat32);
static_assert(TensorTypeOf<const double>::value == TensorType::kFloat64);
static_assert(TensorTypeOf<int8_t>::value == TensorType::kInt8);
static_assert(TensorTypeOf<uint8_t>::value == TensorType::kUInt8);
static_assert(TensorTypeOf<int16_t>::value == TensorType::kInt16);
static_assert(TensorTypeOf<int32_t>::value == TensorType::kInt32);
static_assert(TensorTypeOf<int64_t>::value == TensorType::kInt64);
static_assert(TensorTypeOf<bool>::value == TensorType::kBool);
static_assert(TensorTypeOf<tprobe::Float16>::value == TensorType::kFloat16);
static_assert(TensorTypeOf<tprobe::BFloat16>::value == TensorType::kBFloat16);
static_assert(TensorTypeOf<std::complex<float>>::value ==
              TensorType::kComplex64);
static_assert(TensorTypeOf<std::complex<double>>::value ==
              TensorType::kComplex128);

[[maybe_unused]] void UseEverything(tprobe::Client& client) {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> shape{2, 3};
  const std::array<tprobe::BFloat16, 2> half{};
  const int64_t half_shape[1] = {2};
  const tprobe::TensorData t = tprobe::TensorData::Of(x, shape, true);
  const tprobe::TensorData h = tprobe::TensorData::Of(half, half_shape);
  const tprobe::TensorData p =
      tprobe::TensorData::Of(x.data(), x.size(), shape.data(), shape.size());
  {
    tprobe::ScopedCall module = client.Module("net", "Net");
    module.Input(t);
    module.Input(tprobe::Value::List().Append(tprobe::Value::Tensor(h)));
    module.Kwarg("k", tprobe::Value::Dict().Set("a", tprobe::Value::Int(1)));
    module.Parameter("weight", p);
    module.Stack({"File a.py, line 1, in f, \n x()"});
    tprobe::ScopedCall moved = std::move(module);
    moved.Output(t);
    const uint32_t index = moved.index();
    moved.End();
    tprobe::ScopedCall back =
        client.Cell("net", "Net", tprobe::Direction::kBackward, index);
    back = client.Api("Torch", "add");
  }
  const tprobe::Call call = client.BeginApi("Functional", "relu");
  client.AddTensor(call, tprobe::Section::kInput, t);
  client.AddValue(call, tprobe::Section::kOutput, tprobe::Value::OfInt(3));
  client.EndCall(call);
  client.ParamGrad("net", "Net", "weight", t, tprobe::ModuleStyle::kCell);
  const tprobe::ClientCounters c = client.counters();
  static_cast<void>(c.calls_refused + c.calls_unclosed);
  static_cast<void>(client.dump_dir().size() + client.current_step());
}

#if TPROBE_MISUSE == 1
// A temporary shape would dangle.
[[maybe_unused]] tprobe::TensorData Dangling(const std::vector<float>& x) {
  return tprobe::TensorData::Of(x, std::vector<int64_t>{6});
}
#elif TPROBE_MISUSE == 2
// A temporary buffer would dangle.
[[maybe_unused]] tprobe::TensorData Dangling(const std::vector<int64_t>& s) {
  return tprobe::TensorData::Of(std::vector<float>(6), s);
}
#elif TPROBE_MISUSE == 3
// No TensorType for char.
[[maybe_unused]] tprobe::TensorData NoType(const std::vector<char>& x,
                                           const std::vector<int64_t>& s) {
  return tprobe::TensorData::Of(x, s);
}
#elif TPROBE_MISUSE == 4
// A scoped call thrown away would end at once: [[nodiscard]] with -Werror.
[[maybe_unused]] void Discarded(tprobe::Client& client) {
  client.Module("net", "Net");
}
#elif TPROBE_MISUSE == 5
// A shape must hold int64_t.
[[maybe_unused]] tprobe::TensorData BadShape(const std::vector<float>& x,
                                             const std::vector<int>& s) {
  return tprobe::TensorData::Of(x, s);
}
#endif

}  // namespace
