#ifndef TPROBE_TOOLS_COMPARE_INPUT_ZIP_READER_H_
#define TPROBE_TOOLS_COMPARE_INPUT_ZIP_READER_H_

// The central directory of a zip archive held in memory: where each
// member's bytes lie, and whether they are stored (not compressed). It
// reads ZIP64's end record and extra fields, and reads no member: a
// stored member is used in place (pt_file.h maps .pt files this way).
//
// Thread safety: a pure function.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>

#include "common/status.h"

namespace tprobe::compare {

// One member of the archive: its bytes are file[offset, offset + size).
struct ZipMember {
  size_t offset = 0, size = 0;
  bool stored = true;  // method 0; a compressed member's bytes are not data
};

using ZipDirectory = std::map<std::string, ZipMember, std::less<>>;

// The members of the archive `file`, by name. Returns InvalidArgument
// whose message says what is wrong ("too short", "no zip directory", "bad
// zip member NAME", ...) for bytes that are not such an archive or whose
// members run past its end.
Result<ZipDirectory> ReadZipDirectory(std::span<const std::byte> file);

// The little-endian unsigned number of `n` bytes (at most 8) at `p`.
uint64_t LittleEndian(const std::byte* p, size_t n);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_INPUT_ZIP_READER_H_
