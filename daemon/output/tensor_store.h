#ifndef TPROBE_DAEMON_OUTPUT_TENSOR_STORE_H_
#define TPROBE_DAEMON_OUTPUT_TENSOR_STORE_H_

// The .npy files of one step{N}/rank{R}/dump_tensor_data/ directory, written
// under msprobe's data_name (entry_renderer.h). Identical payloads are
// stored once: a tensor whose dtype, shape, size and CRC-32 equal those of a
// file already stored here, and whose bytes are then verified equal to that
// file's, becomes a hard link to it. Every data_name stays a valid file; the
// disk holds each distinct payload once.
//
// A file name stored again is replaced (written or linked to a temporary
// name, then renamed over it), so the names it shared an inode with keep
// their content. Where the file system refuses a hard link, the tensor is
// written as a file of its own.
//
// Thread safety: none; the owning Assembler's producer lock guards it.

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"

namespace tprobe::daemon {

class TensorStore {
 public:
  // `dir` is created on the first Put.
  explicit TensorStore(std::string dir);

  // Stores the tensor (`bytes` as the producer sent them: C order,
  // little-endian; 2 bytes per element for bfloat16, which the file holds
  // as its float32 upcast) as dir/file_name. `crc` is stats::Crc32(bytes).
  // A file_name that is not one safe path component (fs::IsSafeComponent)
  // is refused, so nothing is written outside dir.
  // Returns an error naming the file when it cannot be created or linked.
  Status Put(const std::string& file_name, DType dtype,
             std::span<const int64_t> shape, std::span<const std::byte> bytes,
             uint32_t crc);

  const std::string& dir() const { return dir_; }
  // Put calls that wrote a new file, and those that made a hard link.
  uint64_t files_written() const { return files_written_; }
  uint64_t files_linked() const { return files_linked_; }

 private:
  struct Key {
    uint32_t crc;
    uint64_t size;
    DType dtype;
    std::vector<int64_t> shape;
    auto operator<=>(const Key&) const = default;
  };

  // Links dir/file_name to the stored file `source`, if its content is
  // `bytes`. False when it is not, or the link cannot be made.
  bool LinkIfSame(const std::string& source, const std::string& file_name,
                  DType dtype, std::span<const std::byte> bytes);
  void Remember(const Key& key, const std::string& file_name);

  std::string dir_;
  bool dir_made_ = false;
  // The stored file names holding each payload, oldest first.
  std::map<Key, std::vector<std::string>> stored_;
  std::unordered_map<std::string, Key> key_of_;
  uint64_t files_written_ = 0;
  uint64_t files_linked_ = 0;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_OUTPUT_TENSOR_STORE_H_
