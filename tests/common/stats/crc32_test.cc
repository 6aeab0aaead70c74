#include "common/stats/crc32.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/python_script.h"

namespace tprobe::stats {
namespace {

std::span<const std::byte> Bytes(std::string_view s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

TEST(Crc32Test, KnownVectors) {
  EXPECT_EQ(Crc32(Bytes("")), 0x00000000u);
  EXPECT_EQ(Crc32(Bytes("123456789")), 0xcbf43926u);
  EXPECT_EQ(Crc32(Bytes("a")), 0xe8b7be43u);
  EXPECT_EQ(Crc32(Bytes("The quick brown fox jumps over the lazy dog")),
            0x414fa339u);
}

TEST(Crc32Test, HexIsEightLowercaseDigits) {
  EXPECT_EQ(Crc32Hex(0), "00000000");
  EXPECT_EQ(Crc32Hex(0xcbf43926u), "cbf43926");
  EXPECT_EQ(Crc32Hex(0x0000abcdu), "0000abcd");
  EXPECT_EQ(Crc32Hex(0xffffffffu), "ffffffff");
}

TEST(Crc32Test, EmptyInputKeepsRunningValue) {
  EXPECT_EQ(Crc32({}, 0x12345678u), 0x12345678u);
}

TEST(Crc32Test, ChainingEqualsOneCall) {
  std::mt19937 rng(3);
  std::vector<std::byte> data(5000);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  const std::span<const std::byte> all(data);
  const uint32_t whole = Crc32(all);
  for (size_t split : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17},
                       size_t{1000}, size_t{4999}, size_t{5000}}) {
    EXPECT_EQ(Crc32(all.subspan(split), Crc32(all.first(split))), whole)
        << "split at " << split;
  }
}

TEST(Crc32Test, RandomBuffersMatchZlib) {
  // Lengths around the 16-byte table block, around the 256-byte switch to
  // carry-less folding and its 64- and 16-byte steps, and a few larger
  // buffers, all in one file; Python prints zlib.crc32 of each.
  std::mt19937 rng(11);
  std::vector<std::vector<std::byte>> buffers;
  for (size_t len = 0; len <= 70; ++len) buffers.emplace_back(len);
  for (size_t len = 250; len <= 340; ++len) buffers.emplace_back(len);
  for (size_t len : {1000, 4096, 65537, 1 << 20}) buffers.emplace_back(len);
  const std::string path =
      ::testing::TempDir() + "crc32_test_" + std::to_string(getpid()) + ".bin";
  {
    std::ofstream f(path, std::ios::binary);
    for (auto& buf : buffers) {
      for (auto& b : buf) b = static_cast<std::byte>(rng());
      const auto len = static_cast<uint32_t>(buf.size());
      f.write(reinterpret_cast<const char*>(&len), 4);
      f.write(reinterpret_cast<const char*>(buf.data()),
              static_cast<std::streamsize>(buf.size()));
    }
  }
  const std::string out = testing::RunPythonScript(
      TPROBE_PYTHON,
      "import struct, sys, zlib\n"
      "data = open(sys.argv[1], 'rb').read()\n"
      "pos = 0\n"
      "while pos < len(data):\n"
      "    (n,) = struct.unpack_from('<I', data, pos)\n"
      "    print('%08x' % zlib.crc32(data[pos + 4:pos + 4 + n]))\n"
      "    pos += 4 + n\n",
      {path});
  std::remove(path.c_str());
  std::istringstream lines(out);
  std::string expected;
  for (const auto& buf : buffers) {
    ASSERT_TRUE(std::getline(lines, expected)) << "python printed too little";
    EXPECT_EQ(Crc32Hex(Crc32(buf)), expected) << "length " << buf.size();
    if (buf.size() > 1) {  // Same bytes starting at an odd address.
      std::vector<std::byte> shifted(buf.size() + 1);
      std::copy(buf.begin(), buf.end(), shifted.begin() + 1);
      EXPECT_EQ(Crc32Hex(Crc32(std::span(shifted).subspan(1))), expected);
    }
  }
}

}  // namespace
}  // namespace tprobe::stats
