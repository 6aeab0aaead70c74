#include "common/stats/tensor_stats.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "common/dump/stats_json.h"
#include "common/stats/half.h"
#include "tests/support/python_script.h"

namespace tprobe::stats {
namespace {

using dump::Json;

// The dump.json bytes of `stats`, as msprobe would write them.
std::string StatsJson(const TensorStats& stats) {
  Json out = Json::object();
  dump::AppendStats(stats, &out);
  return dump::PythonJsonDumps(out);
}

// A Stat for test messages: null, true/false, 7 or 7.0 (the JSON spelling).
std::string Show(const Stat& stat) {
  Json out = Json::object();
  dump::AppendStats({stat, {}, {}, {}}, &out);
  return dump::PythonJsonDumps(out["Max"]);
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Case {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> data;
};

template <typename T>
Case MakeCase(std::string name, DType dtype, std::vector<int64_t> shape,
              const std::vector<T>& values) {
  Case c{std::move(name), dtype, std::move(shape), {}};
  c.data.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(c.data.data(), values.data(), c.data.size());
  return c;
}

size_t Numel(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

// The independent reference, following msprobe 26.x's get_stat_info with
// precision "low", for both StatRules: Max/Min straight from torch (exact).
// kPyTorch: integer and float64 tensors get only Max and Min (as torch
// gives them). kMindSpore: Mean and Norm come
// from torch's float64 reductions of the same values (after the .float()
// cast for integer and float64 tensors), rounded to the native dtype, with
// torch's float32-accumulator overflow: a sum or sum of squares beyond the
// float32 range gives inf. (torch's own float32 sums are not used: their
// rounding error on large or cancelling tensors exceeds one ulp, and the CPU
// fp16 kernels overflow at 65504 where CUDA's do not.) Complex stats come
// from numpy, as in msprobe, with the mean taken in float64.
//
// Each case is one line "path dtype dims..." on stdin; each answer is one
// line of eight tokens (kPyTorch's four, then kMindSpore's): None,
// True/False, int:N, or float.hex().
constexpr char kReferenceScript[] = R"py(
import sys
import numpy as np
import torch

DTYPES = {
    'float32': torch.float32, 'float16': torch.float16,
    'bfloat16': torch.bfloat16, 'float64': torch.float64,
    'int8': torch.int8, 'uint8': torch.uint8, 'int16': torch.int16,
    'int32': torch.int32, 'int64': torch.int64, 'bool': torch.bool,
    'complex64': torch.complex64, 'complex128': torch.complex128,
}


def fmt(v):
    if v is None:
        return 'None'
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return 'int:%d' % v
    return float(v).hex()


def overflows_float32(v):
    return bool(torch.tensor(v, dtype=torch.float64).float().isinf())


def stats(t, pytorch):
    if t.numel() == 0:
        return [None] * 4
    if t.dtype == torch.bool:
        return [t.any().item(), t.all().item(), None, None]
    if t.is_complex():
        a = np.abs(t.numpy())
        mean = np.mean(a, dtype=np.float64).astype(a.dtype)
        return [np.max(a).item(), np.min(a).item(), mean.item(), None]
    if t.dim() == 0:
        return [t.item()] * 4
    if pytorch and t.dtype not in (torch.float16, torch.bfloat16,
                                   torch.float32):
        return [t.max().item(), t.min().item(), None, None]
    if t.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        t = t.float()
    d = t.double()
    total = d.sum().item()
    squares = (d * d).sum().item()
    if overflows_float32(total):
        mean = total * float('inf')
    else:
        mean = d.mean().to(t.dtype).item()
    if overflows_float32(squares):
        norm = float('inf')
    else:
        norm = torch.norm(d).to(t.dtype).item()
    return [t.max().item(), t.min().item(), mean, norm]


for line in sys.stdin:
    path, name, *dims = line.split()
    raw = bytearray(open(path, 'rb').read())
    dtype = DTYPES[name]
    if raw:
        t = torch.frombuffer(raw, dtype=dtype)
    else:
        t = torch.empty(0, dtype=dtype)
    t = t.reshape([int(d) for d in dims])
    print(' '.join(fmt(v) for v in stats(t, True) + stats(t, False)))
)py";

std::string DTypeName(DType t) {
  return std::string(TorchName(t).substr(std::string_view("torch.").size()));
}

// Runs the reference script over all cases; returns its answer lines.
std::vector<std::string> ReferenceStats(const std::vector<Case>& cases) {
  const std::string base = ::testing::TempDir() + "tensor_stats_test_" +
                           std::to_string(getpid()) + "_";
  std::string manifest;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string path = base + std::to_string(i) + ".bin";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(c.data.data()),
               static_cast<std::streamsize>(c.data.size()));
    manifest += path + " " + DTypeName(c.dtype);
    for (int64_t d : c.shape) manifest += " " + std::to_string(d);
    manifest += "\n";
  }
  const std::string out =
      testing::RunPythonScript(TPROBE_PYTHON, kReferenceScript, {}, manifest);
  for (size_t i = 0; i < cases.size(); ++i) {
    std::remove((base + std::to_string(i) + ".bin").c_str());
  }
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The dtype whose ulp bounds the error of Mean and Norm (and of complex
// Max/Min): the native dtype for fp16/bf16/fp32 and complex, float32 for the
// dtypes that msprobe casts with .float().
DType RoundingDType(DType t) {
  switch (t) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kComplex128:
      return t;
    default:
      return DType::kFloat32;
  }
}

// Position of `v` on the number line of `dtype` (float16, bfloat16 or
// float32), counted in units in the last place.
int64_t UlpIndex(DType dtype, double v) {
  uint32_t bits, sign_bit;
  switch (dtype) {
    case DType::kFloat16:
      bits = DoubleToHalf(v), sign_bit = 0x8000u;
      break;
    case DType::kBFloat16:
      bits = FloatToBFloat16(static_cast<float>(v)), sign_bit = 0x8000u;
      break;
    default:
      bits = std::bit_cast<uint32_t>(static_cast<float>(v));
      sign_bit = 0x80000000u;
  }
  const auto magnitude = static_cast<int64_t>(bits & ~sign_bit);
  return (bits & sign_bit) ? -magnitude : magnitude;
}

// True if `v` is a value of `dtype`.
bool Representable(DType dtype, double v) {
  switch (dtype) {
    case DType::kFloat16:
      return RoundToHalf(v) == v;
    case DType::kBFloat16:
      return RoundToBFloat16(v) == v;
    case DType::kComplex128:
      return true;
    default:
      return static_cast<float>(v) == v;
  }
}

// Compares one statistic with the reference token. With `exact`, a float
// must be bit-equal (as a double); otherwise it must be a value of the
// rounding dtype within one ulp of the reference.
void ExpectStat(const Case& c, const char* key, const Stat& ours,
                const std::string& expected, bool exact) {
  SCOPED_TRACE(c.name + " " + key + ": ours " + Show(ours) + ", reference " +
               expected);
  if (expected == "None") {
    EXPECT_TRUE(std::holds_alternative<std::monostate>(ours));
  } else if (expected == "True" || expected == "False") {
    ASSERT_TRUE(std::holds_alternative<bool>(ours));
    EXPECT_EQ(std::get<bool>(ours), expected == "True");
  } else if (expected.rfind("int:", 0) == 0) {
    ASSERT_TRUE(std::holds_alternative<int64_t>(ours)) << "expected an integer";
    EXPECT_EQ(std::get<int64_t>(ours), std::stoll(expected.substr(4)));
  } else {
    ASSERT_TRUE(std::holds_alternative<double>(ours)) << "expected a float";
    const double want = std::strtod(expected.c_str(), nullptr);
    const double got = std::get<double>(ours);
    if (std::isnan(want) || std::isnan(got)) {
      EXPECT_TRUE(std::isnan(want) && std::isnan(got));
      return;
    }
    if (exact || std::isinf(want) || std::isinf(got)) {
      EXPECT_EQ(got, want);
      return;
    }
    const DType rounding = RoundingDType(c.dtype);
    EXPECT_TRUE(Representable(rounding, got)) << "not a value of the dtype";
    if (rounding == DType::kComplex128) {
      // A float64 sum of n terms: the rounding errors of the two summation
      // orders (ours sequential, numpy pairwise) stay far below 1e-12.
      EXPECT_NEAR(got, want, std::fabs(want) * 1e-12);
    } else {
      EXPECT_LE(std::abs(UlpIndex(rounding, got) - UlpIndex(rounding, want)),
                1);
    }
  }
}

void ExpectMatchesReference(const std::vector<Case>& cases) {
  const std::vector<std::string> reference = ReferenceStats(cases);
  ASSERT_EQ(reference.size(), cases.size()) << "reference script failed";
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::istringstream tokens(reference[i]);
    for (StatRules rules : {StatRules::kPyTorch, StatRules::kMindSpore}) {
      SCOPED_TRACE(rules == StatRules::kPyTorch ? "kPyTorch" : "kMindSpore");
      const TensorStats ours = ComputeStats(c.dtype, c.shape, c.data, rules);
      std::array<std::string, 4> want;
      for (auto& w : want) tokens >> w;
      const bool complex =
          c.dtype == DType::kComplex64 || c.dtype == DType::kComplex128;
      const bool scalar = c.shape.empty() && !complex;
      ExpectStat(c, "Max", ours.max, want[0], scalar || !complex);
      ExpectStat(c, "Min", ours.min, want[1], scalar || !complex);
      ExpectStat(c, "Mean", ours.mean, want[2], scalar);
      ExpectStat(c, "Norm", ours.norm, want[3], scalar);
    }
  }
}

class TensorStatsTest : public ::testing::Test {
 protected:
  std::mt19937_64 rng_{42};

  std::vector<float> Normal(size_t n, float stddev) {
    std::normal_distribution<float> dist(0.5f, stddev);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return v;
  }
  std::vector<uint16_t> Halves(const std::vector<float>& v) {
    std::vector<uint16_t> out;
    for (float x : v) out.push_back(FloatToHalf(x));
    return out;
  }
  std::vector<uint16_t> BFloat16s(const std::vector<float>& v) {
    std::vector<uint16_t> out;
    for (float x : v) out.push_back(FloatToBFloat16(x));
    return out;
  }
  template <typename T>
  std::vector<T> Integers(size_t n, T lo, T hi) {
    std::uniform_int_distribution<int64_t> dist(lo, hi);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(dist(rng_));
    return v;
  }
};

// Shapes whose element counts exercise the vector body, the scalar tail and
// the conversion chunks (2048 elements) of the kernels.
const std::vector<std::vector<int64_t>> kShapes = {
    {1}, {3, 5, 7}, {16}, {33}, {1000, 37}};

TEST_F(TensorStatsTest, FloatingDtypesMatchTorch) {
  std::vector<Case> cases;
  for (const auto& shape : kShapes) {
    const size_t n = Numel(shape);
    const std::vector<float> f = Normal(n, 3.0f);
    cases.push_back(MakeCase("fp32", DType::kFloat32, shape, f));
    cases.push_back(MakeCase("fp16", DType::kFloat16, shape, Halves(f)));
    cases.push_back(MakeCase("bf16", DType::kBFloat16, shape, BFloat16s(f)));
    std::vector<double> d(n);
    for (double& x : d) x = std::normal_distribution<double>(0, 1e3)(rng_);
    cases.push_back(MakeCase("fp64", DType::kFloat64, shape, d));
  }
  // Values that need fp32 range, and fp64 values beyond it.
  cases.push_back(MakeCase("fp32 wide", DType::kFloat32, {4},
                           std::vector<float>{1e30f, -3e-38f, 7e37f, 1e-45f}));
  cases.push_back(MakeCase("fp64 beyond fp32", DType::kFloat64, {3},
                           std::vector<double>{1e300, -2.0, 1e-320}));
  ExpectMatchesReference(cases);
}

TEST_F(TensorStatsTest, IntegerDtypesGiveMaxMinOrAreCastToFloat32) {
  std::vector<Case> cases;
  for (const auto& shape : kShapes) {
    const size_t n = Numel(shape);
    cases.push_back(
        MakeCase("int8", DType::kInt8, shape, Integers<int8_t>(n, -128, 127)));
    cases.push_back(
        MakeCase("uint8", DType::kUInt8, shape, Integers<uint8_t>(n, 0, 255)));
    cases.push_back(MakeCase("int16", DType::kInt16, shape,
                             Integers<int16_t>(n, -32768, 32767)));
    cases.push_back(
        MakeCase("int32", DType::kInt32, shape,
                 Integers<int32_t>(n, -2147483647 - 1, 2147483647)));
    cases.push_back(
        MakeCase("int64", DType::kInt64, shape,
                 Integers<int64_t>(n, std::numeric_limits<int64_t>::min(),
                                   std::numeric_limits<int64_t>::max())));
    cases.push_back(MakeCase("int64 small", DType::kInt64, shape,
                             Integers<int64_t>(n, -1000, 1000)));
  }
  ExpectMatchesReference(cases);
}

TEST_F(TensorStatsTest, Int64MaxIsAnIntegerForPyTorchAFloatForMindSpore) {
  const std::vector<int64_t> v = {3, 999, -5};
  const std::vector<int64_t> shape = {3};
  // What msprobe 26.x writes for torch.tensor([3, 999, -5]).
  EXPECT_EQ(
      StatsJson(ComputeStats(DType::kInt64, shape, std::as_bytes(std::span(v)),
                             StatRules::kPyTorch)),
      "{\n \"Max\": 999,\n \"Min\": -5,\n \"Mean\": null,\n "
      "\"Norm\": null\n}");
  const TensorStats stats = ComputeStats(
      DType::kInt64, shape, std::as_bytes(std::span(v)), StatRules::kMindSpore);
  EXPECT_EQ(Show(stats.max), "999.0");
  EXPECT_EQ(Show(stats.min), "-5.0");
}

TEST_F(TensorStatsTest, BoolGivesAnyAndAll) {
  std::vector<Case> cases;
  for (const auto& shape : kShapes) {
    const size_t n = Numel(shape);
    cases.push_back(MakeCase("bool mixed", DType::kBool, shape,
                             Integers<uint8_t>(n, 0, 1)));
    cases.push_back(
        MakeCase("bool true", DType::kBool, shape, std::vector<uint8_t>(n, 1)));
    cases.push_back(MakeCase("bool false", DType::kBool, shape,
                             std::vector<uint8_t>(n, 0)));
  }
  cases.push_back(
      MakeCase("bool 0-d", DType::kBool, {}, std::vector<uint8_t>{1}));
  ExpectMatchesReference(cases);
}

TEST_F(TensorStatsTest, ComplexGivesAbsStatsWithoutNorm) {
  std::vector<Case> cases;
  for (const auto& shape : kShapes) {
    const size_t n = Numel(shape);
    const std::vector<float> f = Normal(2 * n, 2.0f);
    cases.push_back(MakeCase("complex64", DType::kComplex64, shape, f));
    std::vector<double> d(f.begin(), f.end());
    for (double& x : d) x *= 1.0 + 1e-9;
    cases.push_back(MakeCase("complex128", DType::kComplex128, shape, d));
  }
  cases.push_back(MakeCase("complex64 nan", DType::kComplex64, {3},
                           std::vector<float>{1, 2, kNaN, 0, 3, 4}));
  ExpectMatchesReference(cases);
}

TEST_F(TensorStatsTest, ZeroDimTensorsGiveTheValueItself) {
  std::vector<Case> cases = {
      MakeCase("fp32 0-d", DType::kFloat32, {}, std::vector<float>{-3.25f}),
      MakeCase("fp32 0-d nan", DType::kFloat32, {}, std::vector<float>{kNaN}),
      MakeCase("fp16 0-d", DType::kFloat16, {},
               std::vector<uint16_t>{FloatToHalf(-0.1f)}),
      MakeCase("bf16 0-d", DType::kBFloat16, {},
               std::vector<uint16_t>{FloatToBFloat16(-0.1f)}),
      MakeCase("fp64 0-d", DType::kFloat64, {}, std::vector<double>{-0.1}),
      MakeCase("int8 0-d", DType::kInt8, {}, std::vector<int8_t>{-7}),
      MakeCase("uint8 0-d", DType::kUInt8, {}, std::vector<uint8_t>{200}),
      MakeCase("int16 0-d", DType::kInt16, {}, std::vector<int16_t>{-300}),
      MakeCase("int32 0-d", DType::kInt32, {}, std::vector<int32_t>{-70000}),
      MakeCase("int64 0-d", DType::kInt64, {},
               std::vector<int64_t>{std::numeric_limits<int64_t>::min()}),
      MakeCase("int64 0-d zero", DType::kInt64, {}, std::vector<int64_t>{0}),
      MakeCase("complex64 0-d", DType::kComplex64, {},
               std::vector<float>{3, -4}),
  };
  ExpectMatchesReference(cases);
  // The exact JSON an msprobe dump shows for torch.tensor(0).
  const std::vector<int64_t> zero = {0};
  EXPECT_EQ(
      StatsJson(ComputeStats(DType::kInt64, {}, std::as_bytes(std::span(zero)),
                             StatRules::kPyTorch)),
      "{\n \"Max\": 0,\n \"Min\": 0,\n \"Mean\": 0,\n \"Norm\": 0\n}");
}

TEST_F(TensorStatsTest, EmptyTensorsGiveNulls) {
  std::vector<Case> cases;
  for (DType t :
       {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
        DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32,
        DType::kInt64, DType::kBool, DType::kComplex64, DType::kComplex128}) {
    cases.push_back(Case{"empty " + DTypeName(t), t, {0}, {}});
    cases.push_back(Case{"empty 2-d " + DTypeName(t), t, {3, 0}, {}});
  }
  ExpectMatchesReference(cases);
}

TEST_F(TensorStatsTest, NaNAndInfinityFollowTorch) {
  std::vector<Case> cases;
  for (size_t n : {size_t{5}, size_t{64}, size_t{5000}}) {
    for (size_t pos : {size_t{0}, n / 2, n - 1}) {
      std::vector<float> f = Normal(n, 1.0f);
      f[pos] = kNaN;
      const std::vector<int64_t> shape = {static_cast<int64_t>(n)};
      cases.push_back(MakeCase("fp32 nan", DType::kFloat32, shape, f));
      cases.push_back(MakeCase("fp16 nan", DType::kFloat16, shape, Halves(f)));
      cases.push_back(
          MakeCase("bf16 nan", DType::kBFloat16, shape, BFloat16s(f)));
      cases.push_back(MakeCase("fp64 nan", DType::kFloat64, shape,
                               std::vector<double>(f.begin(), f.end())));
      f[pos] = kInf;
      cases.push_back(MakeCase("fp32 +inf", DType::kFloat32, shape, f));
      cases.push_back(MakeCase("fp16 +inf", DType::kFloat16, shape, Halves(f)));
      f[n - 1 - pos] = -kInf;
      if (n - 1 - pos != pos) {
        cases.push_back(MakeCase("fp32 +-inf", DType::kFloat32, shape, f));
      }
    }
  }
  ExpectMatchesReference(cases);
}

TEST_F(TensorStatsTest, Fp16NormOverflowsToInfinity) {
  const std::vector<float> f(16, 60000.0f);
  const std::vector<Case> cases = {
      MakeCase("fp16 big", DType::kFloat16, {16}, Halves(f))};
  ExpectMatchesReference(cases);
  const TensorStats stats = ComputeStats(DType::kFloat16, cases[0].shape,
                                         cases[0].data, StatRules::kPyTorch);
  EXPECT_EQ(Show(stats.norm), "Infinity");
  EXPECT_EQ(Show(stats.max), "60000.0");
  EXPECT_EQ(Show(stats.mean), "60000.0");
}

TEST_F(TensorStatsTest, Float32AccumulatorOverflowGivesInfinityLikeTorch) {
  const std::vector<float> f = {3e38f, 3e38f, 1.0f};
  const std::vector<Case> cases = {
      MakeCase("fp32 sum overflow", DType::kFloat32, {3}, f),
      MakeCase("fp32 square overflow", DType::kFloat32, {2},
               std::vector<float>{2e19f, -1.0f})};
  ExpectMatchesReference(cases);
  const TensorStats stats = ComputeStats(DType::kFloat32, cases[0].shape,
                                         cases[0].data, StatRules::kPyTorch);
  EXPECT_EQ(Show(stats.mean), "Infinity");
  EXPECT_EQ(Show(stats.norm), "Infinity");
  EXPECT_EQ(stats.max, Stat(static_cast<double>(3e38f)));
}

// The exact bits of a Stat, for comparing two results: the JSON spelling
// of a double is its shortest round trip, so equal text is equal bits.
std::string Bits(const TensorStats& s) { return StatsJson(s); }

// A StatsStream fed a tensor's bytes in pieces cut anywhere (inside an
// element, one byte at a time, empty pieces) gives ComputeStats's result
// for the whole buffer, bit for bit, for every dtype and both rules.
TEST_F(TensorStatsTest, StatsStreamMatchesComputeStatsHoweverCut) {
  std::mt19937_64 rng(20261206);
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {1}, {7}, {17}, {2049}, {3, 5000}, {70000}};
  const DType dtypes[] = {
      DType::kFloat32, DType::kFloat16, DType::kBFloat16,  DType::kFloat64,
      DType::kInt8,    DType::kUInt8,   DType::kInt16,     DType::kInt32,
      DType::kInt64,   DType::kBool,    DType::kComplex64, DType::kComplex128};
  int checked = 0;
  for (DType dtype : dtypes) {
    for (const std::vector<int64_t>& shape : shapes) {
      const size_t n = Numel(shape);
      std::vector<std::byte> data(n * ElementSize(dtype));
      if (dtype == DType::kFloat32 || dtype == DType::kComplex64) {
        std::vector<float> f = Normal(data.size() / 4, 3.0f);
        if (f.size() > 9) f[f.size() / 3] = kInf;
        if (!data.empty()) std::memcpy(data.data(), f.data(), data.size());
      } else if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {
        std::vector<float> f = Normal(n, 3.0f);
        std::vector<uint16_t> h =
            dtype == DType::kFloat16 ? Halves(f) : BFloat16s(f);
        if (!data.empty()) std::memcpy(data.data(), h.data(), data.size());
      } else if (dtype == DType::kFloat64 || dtype == DType::kComplex128) {
        std::normal_distribution<double> normal(0.5, 3.0);
        for (size_t i = 0; i < data.size() / 8; ++i) {
          const double v = normal(rng);
          std::memcpy(data.data() + i * 8, &v, 8);
        }
      } else if (dtype == DType::kBool) {
        for (std::byte& b : data) b = std::byte(rng() % 2);
      } else {
        for (std::byte& b : data) b = std::byte(rng());
      }
      for (StatRules rules : {StatRules::kPyTorch, StatRules::kMindSpore}) {
        const std::string whole = Bits(ComputeStats(dtype, shape, data, rules));
        for (int cut = 0; cut < 4; ++cut) {
          StatsStream stream(dtype, shape, rules);
          size_t at = 0;
          while (at < data.size()) {
            // Pieces of 1 byte, of up to 13 bytes, of up to 70 KiB, and
            // empty ones between.
            const size_t most = cut == 0 ? 1 : cut == 1 ? 13 : 70000;
            const size_t take =
                std::min<size_t>(data.size() - at, 1 + rng() % most);
            stream.Add({data.data() + at, take});
            if (cut == 3) stream.Add({});
            at += take;
          }
          EXPECT_EQ(Bits(stream.Finish()), whole)
              << "dtype " << static_cast<int>(dtype) << ", " << n
              << " elements, cut " << cut;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 12 * 8 * 2 * 4);
}

}  // namespace
}  // namespace tprobe::stats
