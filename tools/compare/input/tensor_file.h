#ifndef TPROBE_TOOLS_COMPARE_INPUT_TENSOR_FILE_H_
#define TPROBE_TOOLS_COMPARE_INPUT_TENSOR_FILE_H_

// A tensor file of a dump mapped into memory, read-only, for the
// tensor-mode metrics: nothing is copied, the pages are read as the metrics
// walk them. Two formats: the .npy files of tprobe and of msprobe's
// MindSpore dumps, and the .pt files of msprobe's PyTorch dumps (read by
// pt_file.h, which runs none of their pickle).
//
// Thread safety: a MappedTensor is immutable; Open may be called
// concurrently.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"

namespace tprobe::compare {

class MappedTensor {
 public:
  // Maps the .npy or .pt file at `path` (by its extension) and checks its
  // header and size (common/dump/npy.h's rules, pt_file.h's). An error
  // names the path and what is wrong.
  static Result<MappedTensor> Open(const std::string& path);

  MappedTensor(MappedTensor&& other) noexcept;
  MappedTensor& operator=(MappedTensor&& other) noexcept;
  MappedTensor(const MappedTensor&) = delete;
  MappedTensor& operator=(const MappedTensor&) = delete;
  ~MappedTensor();

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t size() const { return count_; }  // elements
  // Complex tensors are compared by magnitude, as |x|.
  bool is_complex() const {
    return dtype_ == DType::kComplex64 || dtype_ == DType::kComplex128;
  }

  // Writes elements [begin, begin + out.size()) as doubles into `out`.
  // REQUIRES: begin + out.size() <= size().
  void ToDouble(size_t begin, std::span<double> out) const;

 private:
  MappedTensor() = default;

  void* map_ = nullptr;
  size_t map_size_ = 0;
  const std::byte* data_ = nullptr;
  DType dtype_ = DType::kFloat32;
  std::vector<int64_t> shape_;
  size_t count_ = 0;
  bool bf16_raw_ = false;  // a .pt's bfloat16 (a .npy holds its upcast)
};

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_INPUT_TENSOR_FILE_H_
