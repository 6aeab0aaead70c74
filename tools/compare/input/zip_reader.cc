// A zip archive's central directory, read in place (zip_reader.h).

#include "tools/compare/input/zip_reader.h"

#include <optional>
#include <utility>

namespace tprobe::compare {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;

Status Bad(const std::string& what) { return Status::InvalidArgument(what); }

// Where the central directory starts, and how many entries it holds.
struct Directory {
  uint64_t entries = 0, offset = 0;
};

Result<Directory> FindDirectory(std::span<const std::byte> f) {
  if (f.size() < 22) return Bad("too short");
  // The end-of-central-directory record, within the last 64 KiB + 22.
  size_t eocd = f.size() - 22;
  const size_t lowest = f.size() > 65557 ? f.size() - 65557 : 0;
  while (LittleEndian(&f[eocd], 4) != kEndOfDirectory) {
    if (eocd == lowest) return Bad("no zip directory");
    --eocd;
  }
  Directory d{LittleEndian(&f[eocd + 10], 2), LittleEndian(&f[eocd + 16], 4)};
  // ZIP64: the locator sits just before the record.
  if ((d.entries == 0xFFFF || d.offset == 0xFFFFFFFF) && eocd >= 20 &&
      LittleEndian(&f[eocd - 20], 4) == kZip64Locator) {
    const uint64_t rec = LittleEndian(&f[eocd - 12], 8);
    if (f.size() < 56 || rec > f.size() - 56 ||
        LittleEndian(&f[rec], 4) != kZip64EndOfDirectory) {
      return Bad("bad zip64 directory");
    }
    d.entries = LittleEndian(&f[rec + 32], 8);
    d.offset = LittleEndian(&f[rec + 48], 8);
  }
  return d;
}

// The ZIP64 extra field of the directory entry at `at` (its extra fields
// lie in [begin, end)): the 8-byte values of the fields that are
// 0xFFFFFFFF, in the order uncompressed size, compressed size, offset.
void ReadZip64Extra(std::span<const std::byte> f, size_t at, size_t begin,
                    size_t end, uint64_t& size, uint64_t& local) {
  for (size_t x = begin; x + 4 <= end;) {
    const uint64_t id = LittleEndian(&f[x], 2);
    const size_t len = LittleEndian(&f[x + 2], 2);
    if (x + 4 + len > end) break;
    if (id == 1) {
      size_t p = x + 4;
      auto next = [&](uint64_t& field) {
        if (field == 0xFFFFFFFF && p + 8 <= x + 4 + len) {
          field = LittleEndian(&f[p], 8);
          p += 8;
        }
      };
      uint64_t compressed = LittleEndian(&f[at + 20], 4);
      next(size);
      next(compressed);
      next(local);
    }
    x += 4 + len;
  }
}

// Reads the directory entry at `at` into `members`; returns the offset of
// the next entry.
Result<size_t> ReadEntry(std::span<const std::byte> f, size_t at,
                         ZipDirectory& members) {
  if (at > f.size() || f.size() - at < 46 ||
      LittleEndian(&f[at], 4) != kDirectoryEntry) {
    return Bad("bad zip directory entry");
  }
  const size_t name_len = LittleEndian(&f[at + 28], 2);
  const size_t extra_len = LittleEndian(&f[at + 30], 2);
  const size_t comment_len = LittleEndian(&f[at + 32], 2);
  if (f.size() - at - 46 < name_len + extra_len + comment_len) {
    return Bad("bad zip directory entry");
  }
  uint64_t size = LittleEndian(&f[at + 24], 4);
  uint64_t local = LittleEndian(&f[at + 42], 4);
  const uint64_t method = LittleEndian(&f[at + 10], 2);
  ReadZip64Extra(f, at, at + 46 + name_len, at + 46 + name_len + extra_len,
                 size, local);
  std::string name(reinterpret_cast<const char*>(&f[at + 46]), name_len);
  if (local > f.size() || f.size() - local < 30 ||
      LittleEndian(&f[local], 4) != kLocalHeader) {
    return Bad("bad zip member " + name);
  }
  const size_t data = local + 30 + LittleEndian(&f[local + 26], 2) +
                      LittleEndian(&f[local + 28], 2);
  if (data > f.size() || f.size() - data < size) {
    return Bad("zip member " + name + " runs past the end");
  }
  members[name] = {data, static_cast<size_t>(size), method == 0};
  return at + 46 + name_len + extra_len + comment_len;
}

}  // namespace

uint64_t LittleEndian(const std::byte* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    v |= static_cast<uint64_t>(std::to_integer<uint8_t>(p[i])) << (8 * i);
  }
  return v;
}

Result<ZipDirectory> ReadZipDirectory(std::span<const std::byte> file) {
  Result<Directory> dir = FindDirectory(file);
  if (!dir.ok()) return dir.status();
  ZipDirectory members;
  size_t at = dir->offset;
  for (uint64_t i = 0; i < dir->entries; ++i) {
    Result<size_t> next = ReadEntry(file, at, members);
    if (!next.ok()) return next.status();
    at = *next;
  }
  return members;
}

}  // namespace tprobe::compare
