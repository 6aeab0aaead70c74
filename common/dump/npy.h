#ifndef TPROBE_COMMON_DUMP_NPY_H_
#define TPROBE_COMMON_DUMP_NPY_H_

// Tensor files in numpy's .npy format, which any numpy.load reads.
//
// WriteNpy writes format version 1.0: the magic "\x93NUMPY", version bytes
// 1 0, a little-endian uint16 header length, then a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by '\n' so that the data starts at a multiple
// of 64 bytes, then the elements in C order.
//
// dtype -> descr: float32 '<f4', float16 '<f2', float64 '<f8', int8 '|i1',
// uint8 '|u1', int16 '<i2', int32 '<i4', int64 '<i8', bool '|b1',
// complex64 '<c8', complex128 '<c16'. numpy has no bfloat16, so a bfloat16
// tensor is written as its exact float32 upcast ('<f4').

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"

namespace tprobe::dump {

// Writes the tensor to `path` as a .npy file, through a temporary file and
// a rename (common/fs/atomic_file.h, mode 0640), so a reader sees either the
// old file or the complete new one.
//
// `data` holds the elements in C order and little-endian byte order, as the
// tensor had them (2 bytes per element for bfloat16).
//
// REQUIRES: every dimension is >= 0 and data.size() equals the element
// count times ElementSize(dtype); a mismatch is a bug and asserts.
//
// Returns an error Status naming the path (and the system error) when the
// file cannot be created, written or renamed; the temporary file is removed
// then.
//
// Thread safety: may be called concurrently for different paths.
Status WriteNpy(const std::string& path, DType dtype,
                std::span<const int64_t> shape,
                std::span<const std::byte> data);

// A tensor loaded from a .npy file. `data` holds the elements in C order,
// little-endian, ElementSize(dtype) bytes each.
struct NpyArray {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> data;
};

// Reads a .npy file of format version 1.0 or 2.0 whose descr is one of those
// listed above (a '<f4' file loads as float32; bfloat16 cannot be told
// apart from it).
//
// Returns an error whose message starts with "<path>: " and says what is
// wrong: the file cannot be opened or read, it is not a .npy file (bad
// magic), the format version is unsupported, it is truncated, the header
// cannot be parsed, the dtype is unsupported (big-endian, object, or another
// kind), the array is in Fortran order, or the data size does not match the
// shape.
//
// Thread safety: may be called concurrently.
Result<NpyArray> ReadNpy(const std::string& path);

// Where the elements of a .npy file are: its dtype and shape, and the byte
// range of the data within the file.
struct NpyLayout {
  DType dtype;
  std::vector<int64_t> shape;
  size_t data_offset = 0;  // from the start of the file
  size_t data_bytes = 0;   // element count times ElementSize(dtype)
};

// Parses the preamble of the .npy file whose complete bytes are `file` (a
// memory-mapped file, say) and checks that the data fills the rest of it
// exactly. ReadNpy's rules and error messages ("<path>: ..."); `path` only
// names the file in them.
//
// Thread safety: may be called concurrently.
Result<NpyLayout> ParseNpyLayout(std::string_view path,
                                 std::span<const std::byte> file);

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_NPY_H_
