#include "common/stats/crc32.h"

#include <array>
#include <bit>
#include <cstring>

namespace tprobe::stats {
namespace {

constexpr uint32_t kPolynomial = 0xedb88320u;  // Reflected 0x04C11DB7.
constexpr int kSlices = 16;

using Table = std::array<std::array<uint32_t, 256>, kSlices>;

// table[0][b] is the CRC register after shifting in byte b; table[k][b] is
// table[0][b] advanced by k further zero bytes, so 16 input bytes can be
// folded with 16 independent lookups.
constexpr Table MakeTable() {
  Table t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit) {
      c = (c & 1u) ? (c >> 1) ^ kPolynomial : c >> 1;
    }
    t[0][b] = c;
  }
  for (int k = 1; k < kSlices; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t prev = t[k - 1][b];
      t[k][b] = (prev >> 8) ^ t[0][prev & 0xffu];
    }
  }
  return t;
}

constexpr Table kTable = MakeTable();

uint32_t LoadLe32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (std::endian::native == std::endian::big) {
    v = __builtin_bswap32(v);
  }
  return v;
}

}  // namespace

uint32_t Crc32(std::span<const std::byte> data, uint32_t crc) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  uint32_t c = ~crc;
  while (n >= kSlices) {
    const uint32_t w0 = LoadLe32(p) ^ c;
    const uint32_t w1 = LoadLe32(p + 4);
    const uint32_t w2 = LoadLe32(p + 8);
    const uint32_t w3 = LoadLe32(p + 12);
    c = kTable[15][w0 & 0xff] ^ kTable[14][(w0 >> 8) & 0xff] ^
        kTable[13][(w0 >> 16) & 0xff] ^ kTable[12][w0 >> 24] ^
        kTable[11][w1 & 0xff] ^ kTable[10][(w1 >> 8) & 0xff] ^
        kTable[9][(w1 >> 16) & 0xff] ^ kTable[8][w1 >> 24] ^
        kTable[7][w2 & 0xff] ^ kTable[6][(w2 >> 8) & 0xff] ^
        kTable[5][(w2 >> 16) & 0xff] ^ kTable[4][w2 >> 24] ^
        kTable[3][w3 & 0xff] ^ kTable[2][(w3 >> 8) & 0xff] ^
        kTable[1][(w3 >> 16) & 0xff] ^ kTable[0][w3 >> 24];
    p += kSlices;
    n -= kSlices;
  }
  while (n-- > 0) c = (c >> 8) ^ kTable[0][(c ^ *p++) & 0xffu];
  return ~c;
}

std::string Crc32Hex(uint32_t crc) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out(8, '0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kHex[crc & 0xfu];
    crc >>= 4;
  }
  return out;
}

}  // namespace tprobe::stats
