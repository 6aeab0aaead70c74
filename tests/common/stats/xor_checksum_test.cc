// summary_mode xor (common/stats/xor_checksum.h) on hand-made bytes; the
// comparison with the installed msprobe on a real model is in
// tests/python/pytorch/container_parity_test.py.

#include "common/stats/xor_checksum.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace tprobe::stats {
namespace {

std::vector<std::byte> Bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

template <typename T>
std::vector<std::byte> Of(std::initializer_list<T> values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

TEST(XorChecksumTest, WordsAreLittleEndianAndTheLastIsPaddedWithZeros) {
  const int64_t shape[] = {11};
  // 01..08 | 09 0a 0b (then five zero bytes).
  const auto bytes =
      Bytes({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b});
  EXPECT_EQ(std::get<std::string>(XorChecksum(DType::kUInt8, shape, bytes)),
            XorHex(0x0807060504030201ull ^ 0x0b0a09ull));
}

TEST(XorChecksumTest, EqualWordsCancel) {
  const int64_t shape[] = {2, 4};
  const auto ones = Of<float>({1, 1, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(std::get<std::string>(XorChecksum(DType::kFloat32, shape, ones)),
            "0x0000000000000000");
  // 3f800000 3f800000 | 3f800000 and the padding: the low halves cancel.
  const int64_t three[] = {3};
  EXPECT_EQ(std::get<std::string>(
                XorChecksum(DType::kFloat32, three, Of<float>({1, 1, 1}))),
            "0x3f80000000000000");
}

TEST(XorChecksumTest, AZeroDimTensorIsItsValue) {
  const auto minus_one = Of<int64_t>({-1});
  EXPECT_EQ(std::get<std::string>(XorChecksum(DType::kInt64, {}, minus_one)),
            "0xffffffffffffffff");
  EXPECT_EQ(std::get<std::string>(XorChecksum(DType::kBool, {}, Bytes({1}))),
            "0x0000000000000001");
  EXPECT_EQ(
      std::get<double>(XorChecksum(DType::kFloat32, {}, Of<float>({0.5f}))),
      0.5);
}

TEST(XorChecksumTest, NoElementsIsNull) {
  const int64_t shape[] = {0, 3};
  EXPECT_TRUE(std::holds_alternative<std::monostate>(
      XorChecksum(DType::kFloat32, shape, {})));
}

}  // namespace
}  // namespace tprobe::stats
