#ifndef TPROBE_COMMON_STATS_CRC32_H_
#define TPROBE_COMMON_STATS_CRC32_H_

// CRC-32 as zlib.crc32 computes it (ISO-HDLC: reflected polynomial
// 0xEDB88320, initial value and final xor 0xFFFFFFFF). msprobe's
// summary_mode "md5" is really this CRC over a tensor's raw bytes, written
// as 8 lowercase hex digits (docs/format.md, 2.5).
//
// Buffers of 256 bytes or more are folded with carry-less multiplication
// (PCLMULQDQ) when the CPU has it, about 15 GB/s; shorter ones, and every
// buffer on other CPUs, use slicing-by-16 tables (about 2-3 GB/s). The
// tables and folding constants are computed at compile time, so there is no
// work in static initialisers, and zlib is not linked.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tprobe::stats {

// Returns zlib.crc32(data, crc). Pass the previous result as `crc` to
// continue a running checksum: Crc32(b, Crc32(a)) == Crc32(a + b). The CRC
// of no bytes is `crc` itself (0 for a fresh start). Cannot fail.
//
// Thread safety: pure; any number of threads may call it concurrently.
uint32_t Crc32(std::span<const std::byte> data, uint32_t crc = 0);

// Returns `crc` as exactly 8 lowercase hex digits ("%08x"), the form of
// msprobe's "md5" field.
//
// Thread safety: pure.
std::string Crc32Hex(uint32_t crc);

}  // namespace tprobe::stats

#endif  // TPROBE_COMMON_STATS_CRC32_H_
