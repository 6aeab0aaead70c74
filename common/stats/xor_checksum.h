#ifndef TPROBE_COMMON_STATS_XOR_CHECKSUM_H_
#define TPROBE_COMMON_STATS_XOR_CHECKSUM_H_

// msprobe 26.x's summary_mode "xor" (msprobe/pytorch/xor_checksum and
// json_writer's flush_stat_stack), which it writes under the key "md5" in
// place of the statistics:
//  - a tensor without elements: null;
//  - a 0-d tensor: its value (msprobe's checksum of a 0-d tensor is the
//    tensor), an integer or bool as "0x" and the 16 hex digits of its
//    64-bit two's complement, a float as the number;
//  - any other: the XOR of its bytes read as little-endian 64-bit words,
//    the last one padded with zero bytes, as "0x" and 16 lowercase hex
//    digits. msprobe folds the words pairwise; XOR is associative and
//    commutative, so that is the XOR of every word.
//
// Thread safety: pure.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>

#include "common/dtype.h"

namespace tprobe::stats {

// null, the hex text, or a 0-d float's value.
using XorSum = std::variant<std::monostate, std::string, double>;

// `data` holds the tensor's elements contiguously in host byte order.
XorSum XorChecksum(DType dtype, std::span<const int64_t> shape,
                   std::span<const std::byte> data);

// "0x" and `word` as 16 lowercase hex digits.
std::string XorHex(uint64_t word);

}  // namespace tprobe::stats

#endif  // TPROBE_COMMON_STATS_XOR_CHECKSUM_H_
