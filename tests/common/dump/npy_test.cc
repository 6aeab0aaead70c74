#include "common/dump/npy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/stats/half.h"
#include "tests/support/python_script.h"

namespace tprobe::dump {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const DType kAllDTypes[] = {
    DType::kFloat32, DType::kFloat16, DType::kBFloat16,  DType::kFloat64,
    DType::kInt8,    DType::kUInt8,   DType::kInt16,     DType::kInt32,
    DType::kInt64,   DType::kBool,    DType::kComplex64, DType::kComplex128,
};

std::string DTypeName(DType t) {
  return std::string(TorchName(t).substr(std::string_view("torch.").size()));
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "npy_test_" + std::to_string(getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // Runs `script` with the test directory as argv[1]; returns what it
  // printed.
  std::string RunPython(const std::string& script) const {
    return testing::RunPythonScript(TPROBE_PYTHON, script, {dir_});
  }

  std::vector<std::byte> RandomBytes(DType dtype, size_t numel) {
    std::vector<std::byte> data(numel * ElementSize(dtype));
    for (auto& b : data) b = static_cast<std::byte>(rng_());
    if (dtype == DType::kBool) {
      for (auto& b : data) b &= std::byte{1};
    }
    return data;
  }

  std::string dir_;
  std::mt19937 rng_{5};
};

TEST_F(NpyTest, WrittenFilesLoadInNumpyWithSameBytesAsNpSave) {
  // For each dtype, a 2-d, a 1-d, a 0-d and an empty array. Python checks
  // descr and shape, the values against the raw bytes (bf16 upcast by
  // torch), and that np.save would have written the same file.
  const std::vector<std::vector<int64_t>> shapes = {{3, 5}, {7}, {}, {0, 4}};
  std::string manifest;
  int index = 0;
  for (DType dtype : kAllDTypes) {
    for (const auto& shape : shapes) {
      size_t numel = 1;
      for (int64_t d : shape) numel *= static_cast<size_t>(d);
      const std::vector<std::byte> data = RandomBytes(dtype, numel);
      const std::string name = "a" + std::to_string(index++);
      ASSERT_TRUE(WriteNpy(Path(name + ".npy"), dtype, shape, data).ok());
      EXPECT_FALSE(std::filesystem::exists(Path(name + ".npy.tmp")));
      WriteFile(
          Path(name + ".raw"),
          std::string(reinterpret_cast<const char*>(data.data()), data.size()));
      manifest += name + " " + DTypeName(dtype);
      for (int64_t d : shape) manifest += " " + std::to_string(d);
      manifest += "\n";
    }
  }
  WriteFile(Path("manifest"), manifest);
  const std::string out = RunPython(R"py(
import io, os, sys
import numpy as np
import torch

d = sys.argv[1]
DESCR = {'float32': '<f4', 'float16': '<f2', 'bfloat16': '<f4',
         'float64': '<f8', 'int8': '|i1', 'uint8': '|u1', 'int16': '<i2',
         'int32': '<i4', 'int64': '<i8', 'bool': '|b1', 'complex64': '<c8',
         'complex128': '<c16'}
for line in open(os.path.join(d, 'manifest')):
    name, dtype, *dims = line.split()
    shape = tuple(int(x) for x in dims)
    path = os.path.join(d, name + '.npy')
    a = np.load(path)
    raw = open(os.path.join(d, name + '.raw'), 'rb').read()
    if dtype == 'bfloat16':
        t = torch.frombuffer(bytearray(raw), dtype=torch.bfloat16) if raw \
            else torch.empty(0, dtype=torch.bfloat16)
        raw = t.float().numpy().tobytes()
    problems = []
    if a.dtype.str != DESCR[dtype]:
        problems.append('descr %s' % a.dtype.str)
    if a.shape != shape:
        problems.append('shape %r' % (a.shape,))
    if a.tobytes() != raw:
        problems.append('values differ')
    buf = io.BytesIO()
    np.save(buf, a)
    if buf.getvalue() != open(path, 'rb').read():
        problems.append('bytes differ from np.save')
    print(name, dtype, 'ok' if not problems else ', '.join(problems))
)py");
  std::istringstream lines(out);
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    EXPECT_THAT(line, ::testing::EndsWith(" ok"));
    ++checked;
  }
  EXPECT_EQ(checked, index);
}

TEST_F(NpyTest, HeaderIsPaddedSoDataStartsAtMultipleOf64) {
  const std::vector<float> one = {1.5f};
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {123456789, 0}, {2, 3, 0, 5, 6, 7, 8}, {1, 1, 1, 1, 1}};
  for (const auto& shape : shapes) {
    size_t numel = 1;
    for (int64_t d : shape) numel *= static_cast<size_t>(d);
    const auto data = std::as_bytes(std::span(one)).first(numel * 4);
    ASSERT_TRUE(WriteNpy(Path("x.npy"), DType::kFloat32, shape, data).ok());
    const std::string bytes = ReadFile(Path("x.npy"));
    ASSERT_GE(bytes.size(), 10u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const size_t header_len =
        static_cast<uint8_t>(bytes[8]) |
        static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8;
    EXPECT_EQ((10 + header_len) % 64, 0u);
    EXPECT_EQ(bytes.size(), 10 + header_len + data.size());
    EXPECT_EQ(bytes[10 + header_len - 1], '\n');
  }
  const std::string bytes = ReadFile(Path("x.npy"));
  EXPECT_THAT(bytes.substr(10),
              StartsWith("{'descr': '<f4', 'fortran_order': "
                         "False, 'shape': (1, 1, 1, 1, 1), }"));
}

TEST_F(NpyTest, ReadsFilesWrittenByNumpy) {
  const std::string out = RunPython(R"py(
import os, sys
import numpy as np
from numpy.lib import format as npformat

d = sys.argv[1]
rng = np.random.default_rng(1)
arrays = {
    'f4': rng.standard_normal((4, 3)).astype(np.float32),
    'f2': rng.standard_normal((5,)).astype(np.float16),
    'f8': rng.standard_normal((2, 2, 2)),
    'i1': rng.integers(-128, 127, (9,), dtype=np.int8),
    'u1': rng.integers(0, 255, (3, 3), dtype=np.uint8),
    'i2': rng.integers(-30000, 30000, (6,), dtype=np.int16),
    'i4': rng.integers(-2**31, 2**31 - 1, (2, 5), dtype=np.int32),
    'i8': rng.integers(-2**63, 2**63 - 1, (7,), dtype=np.int64),
    'b1': rng.integers(0, 2, (11,)).astype(np.bool_),
    'c8': (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(
        np.complex64),
    'c16': rng.standard_normal(3) + 1j * rng.standard_normal(3),
    'scalar': np.array(7.25, dtype=np.float32),
    'empty': np.zeros((0, 3), dtype=np.int64),
    'long_shape': np.zeros((1,) * 30, dtype=np.uint8),
}
for name, a in arrays.items():
    np.save(os.path.join(d, name + '.npy'), a)
    a.tofile(os.path.join(d, name + '.raw'))
    print(name, a.dtype.str, ' '.join(str(x) for x in a.shape))
v2 = rng.standard_normal((3, 4)).astype(np.float32)
with open(os.path.join(d, 'v2.npy'), 'wb') as f:
    npformat.write_array(f, v2, version=(2, 0))
v2.tofile(os.path.join(d, 'v2.raw'))
print('v2', v2.dtype.str, '3 4')
)py");
  std::istringstream lines(out);
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    std::istringstream tokens(line);
    std::string name, descr;
    tokens >> name >> descr;
    std::vector<int64_t> shape;
    for (int64_t d; tokens >> d;) shape.push_back(d);
    SCOPED_TRACE(name);
    const Result<NpyArray> array = ReadNpy(Path(name + ".npy"));
    ASSERT_TRUE(array.ok()) << array.status().message();
    EXPECT_EQ(array->shape, shape);
    const std::string raw = ReadFile(Path(name + ".raw"));
    ASSERT_EQ(array->data.size(), raw.size());
    EXPECT_TRUE(std::equal(
        raw.begin(), raw.end(), array->data.begin(),
        [](char a, std::byte b) { return static_cast<std::byte>(a) == b; }));
    const std::string expected_descr =
        descr == "<u1" || descr == "<i1" || descr == "<b1"
            ? "|" + descr.substr(1)
            : descr;
    const std::map<std::string, DType> by_descr = {
        {"<f4", DType::kFloat32},    {"<f2", DType::kFloat16},
        {"<f8", DType::kFloat64},    {"|i1", DType::kInt8},
        {"|u1", DType::kUInt8},      {"<i2", DType::kInt16},
        {"<i4", DType::kInt32},      {"<i8", DType::kInt64},
        {"|b1", DType::kBool},       {"<c8", DType::kComplex64},
        {"<c16", DType::kComplex128}};
    ASSERT_TRUE(by_descr.count(expected_descr)) << descr;
    EXPECT_EQ(array->dtype, by_descr.at(expected_descr));
    ++checked;
  }
  EXPECT_EQ(checked, 15);
}

TEST_F(NpyTest, BFloat16IsWrittenAsItsExactFloat32Upcast) {
  // Every bf16 bit pattern, NaNs and infinities included.
  std::vector<uint16_t> bits(65536);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);
  const std::vector<int64_t> shape = {65536};
  ASSERT_TRUE(WriteNpy(Path("bf16.npy"), DType::kBFloat16, shape,
                       std::as_bytes(std::span(bits)))
                  .ok());
  const Result<NpyArray> array = ReadNpy(Path("bf16.npy"));
  ASSERT_TRUE(array.ok()) << array.status().message();
  EXPECT_EQ(array->dtype, DType::kFloat32);
  ASSERT_EQ(array->data.size(), 65536u * 4);
  for (size_t i = 0; i < bits.size(); ++i) {
    uint32_t f;
    std::memcpy(&f, array->data.data() + 4 * i, 4);
    ASSERT_EQ(f, static_cast<uint32_t>(bits[i]) << 16) << "bf16 bits " << i;
  }
}

TEST_F(NpyTest, RoundTripsEveryDtype) {
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBFloat16) continue;  // Comes back as float32.
    const std::vector<int64_t> shape = {2, 3, 4};
    const std::vector<std::byte> data = RandomBytes(dtype, 24);
    ASSERT_TRUE(WriteNpy(Path("rt.npy"), dtype, shape, data).ok());
    const Result<NpyArray> array = ReadNpy(Path("rt.npy"));
    ASSERT_TRUE(array.ok()) << array.status().message();
    EXPECT_EQ(array->dtype, dtype) << DTypeName(dtype);
    EXPECT_EQ(array->shape, shape);
    EXPECT_EQ(array->data, data) << DTypeName(dtype);
  }
}

TEST_F(NpyTest, WriteReplacesExistingFileAndReportsFailures) {
  const std::vector<int32_t> v = {1, 2, 3};
  const std::vector<int64_t> shape = {3};
  WriteFile(Path("old.npy"), "stale");
  ASSERT_TRUE(WriteNpy(Path("old.npy"), DType::kInt32, shape,
                       std::as_bytes(std::span(v)))
                  .ok());
  EXPECT_TRUE(ReadNpy(Path("old.npy")).ok());

  const std::string missing = Path("no/such/dir/x.npy");
  const Status s =
      WriteNpy(missing, DType::kInt32, shape, std::as_bytes(std::span(v)));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), StartsWith(missing + ": "));
  EXPECT_THAT(s.message(), HasSubstr("No such file or directory"));
}

// A .npy file with the given header dict text, padded as numpy pads it.
std::string NpyBytes(const std::string& dict, const std::string& data,
                     int major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  header.append(64 - (prefix + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i) {
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  return out + header + data;
}

struct CorruptCase {
  const char* name;
  std::string bytes;
  const char* message;
};

TEST_F(NpyTest, CorruptFilesGiveClearErrors) {
  const std::string f4 =
      "{'descr': '<f4', 'fortran_order': False, "
      "'shape': (2, 3), }";
  const std::string data24(24, '\x01');
  const std::string valid = NpyBytes(f4, data24);
  const CorruptCase cases[] = {
      {"not_npy", "hello, world", "not a .npy file (bad magic)"},
      {"empty", "", "truncated .npy file"},
      {"magic_only", std::string("\x93NUM", 4), "truncated .npy file"},
      {"no_header_len", std::string("\x93NUMPY\x01\x00\x10", 9),
       "truncated .npy file (no header length)"},
      {"header_cut", valid.substr(0, 40), "truncated .npy file (header of"},
      {"data_cut", valid.substr(0, valid.size() - 12),
       "truncated .npy file: shape (2, 3) of '<f4' needs 24 bytes of data, "
       "found 12"},
      {"data_extra", valid + "abcd",
       "data size 28 bytes does not match shape (2, 3) of '<f4' (24 bytes)"},
      {"version3", NpyBytes(f4, data24, 3),
       "unsupported .npy format version 3.0"},
      {"big_endian",
       NpyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }",
                data24),
       "unsupported dtype '>f4'"},
      {"unicode",
       NpyBytes("{'descr': '<U2', 'fortran_order': False, 'shape': (3,), }",
                data24),
       "unsupported dtype '<U2'"},
      {"structured",
       NpyBytes("{'descr': [('a', '<f4')], 'fortran_order': False, "
                "'shape': (6,), }",
                data24),
       "unsupported dtype"},
      {"fortran",
       NpyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                data24),
       "Fortran-order arrays are not supported"},
      {"garbage_header", NpyBytes("not a dict", ""), "malformed header"},
      {"negative_dim",
       NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                ""),
       "malformed header"},
      {"missing_key", NpyBytes("{'descr': '<f4', 'shape': (6,), }", data24),
       "needs the keys descr, fortran_order and shape"},
  };
  for (const CorruptCase& c : cases) {
    const std::string path = Path(std::string(c.name) + ".npy");
    WriteFile(path, c.bytes);
    const Result<NpyArray> r = ReadNpy(path);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_THAT(r.status().message(), StartsWith(path + ": ")) << c.name;
    EXPECT_THAT(r.status().message(), HasSubstr(c.message)) << c.name;
  }
  const Result<NpyArray> missing = ReadNpy(Path("missing.npy"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            Path("missing.npy") + ": cannot open: No such file or directory");
  // The same bytes without the corruption load fine.
  WriteFile(Path("valid.npy"), valid);
  EXPECT_TRUE(ReadNpy(Path("valid.npy")).ok());
}

}  // namespace
}  // namespace tprobe::dump
