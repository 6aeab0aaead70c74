#include "common/stats/crc32.h"

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "common/stats/cpu_features.h"

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

// Advances the (inverted) CRC register `c` over n bytes with the tables.
uint32_t UpdateTables(uint32_t c, const unsigned char* p, size_t n) {
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
  return c;
}

#if defined(__x86_64__)
// Carry-less multiplication folding (Intel, "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ"). A 128-bit register holds a
// bit-reflected polynomial A = H*x^64 + L (H in the low qword). Moving it D
// bits further along the message multiplies it by x^D, and
//   A*x^D = H*x^(D+64) + L*x^D  (mod P),
// a product of at most 95 bits that is xored into the block D bits later.
// In the reflected domain the constants are reflect32(x^(D+32) mod P) << 1
// for H and reflect32(x^(D-32) mod P) << 1 for L.
constexpr uint64_t XPowModP(int e) {
  constexpr uint64_t kP = 0x104c11db7u;  // The normal 33-bit polynomial.
  uint64_t r = 1;
  for (int i = 0; i < e; ++i) {
    r <<= 1;
    if (r >> 32) r ^= kP;
  }
  return r;
}

constexpr uint64_t FoldConstant(int e) {
  uint64_t r = XPowModP(e);
  uint64_t reflected = 0;
  for (int i = 0; i < 32; ++i) reflected |= ((r >> i) & 1u) << (31 - i);
  return reflected << 1;
}

static_assert(FoldConstant(544) == 0x154442bd4u, "x^(4*128+32) mod P");
static_assert(FoldConstant(96) == 0x0ccaa009eu, "x^(128-32) mod P");

[[gnu::target("pclmul,sse2")]] inline __m128i Fold(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                       _mm_clmulepi64_si128(x, k, 0x11));
}

// Advances the (inverted) register `c` over n >= 64 bytes: folds four
// 128-bit lanes 512 bits at a time, then one lane 128 bits at a time, and
// finishes the last register and the tail with the tables (the register's
// CRC with a zero start is exactly its remainder times x^32).
[[gnu::target("pclmul,sse2")]] uint32_t UpdatePclmul(uint32_t c,
                                                     const unsigned char* p,
                                                     size_t n) {
  auto load = [](const unsigned char* q) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  };
  const __m128i k512 = _mm_set_epi64x(static_cast<int64_t>(FoldConstant(480)),
                                      static_cast<int64_t>(FoldConstant(544)));
  const __m128i k128 = _mm_set_epi64x(static_cast<int64_t>(FoldConstant(96)),
                                      static_cast<int64_t>(FoldConstant(160)));
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(c)));
  __m128i x1 = load(p + 16);
  __m128i x2 = load(p + 32);
  __m128i x3 = load(p + 48);
  p += 64;
  n -= 64;
  for (; n >= 64; p += 64, n -= 64) {
    x0 = _mm_xor_si128(Fold(x0, k512), load(p));
    x1 = _mm_xor_si128(Fold(x1, k512), load(p + 16));
    x2 = _mm_xor_si128(Fold(x2, k512), load(p + 32));
    x3 = _mm_xor_si128(Fold(x3, k512), load(p + 48));
  }
  __m128i x = _mm_xor_si128(Fold(x0, k128), x1);
  x = _mm_xor_si128(Fold(x, k128), x2);
  x = _mm_xor_si128(Fold(x, k128), x3);
  for (; n >= 16; p += 16, n -= 16) x = _mm_xor_si128(Fold(x, k128), load(p));
  unsigned char last[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(last), x);
  return UpdateTables(UpdateTables(0, last, 16), p, n);
}
#endif

}  // namespace

uint32_t Crc32(std::span<const std::byte> data, uint32_t crc) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
#if defined(__x86_64__)
  if (data.size() >= 256 && CpuHasPclmul()) {
    return ~UpdatePclmul(~crc, p, data.size());
  }
#endif
  return ~UpdateTables(~crc, p, data.size());
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
