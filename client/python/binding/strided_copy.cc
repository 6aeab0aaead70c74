// Gathering a strided tensor into row-major order (strided_copy.h).

#include "client/python/binding/strided_copy.h"

#include <array>
#include <cstring>

#include "common/record/record.h"

namespace tprobe::python {
namespace {

// One row of the innermost dimension: `n` elements `stride` apart.
template <size_t kSize>
std::byte* CopyRow(const std::byte* from, int64_t n, int64_t stride,
                   std::byte* out) {
  const auto step = static_cast<ptrdiff_t>(stride) * kSize;
  for (int64_t i = 0; i < n; ++i, from += step, out += kSize) {
    std::memcpy(out, from, kSize);
  }
  return out;
}

std::byte* CopyRow(const std::byte* from, int64_t n, int64_t stride,
                   size_t size, std::byte* out) {
  if (stride == 1) {
    const size_t bytes = static_cast<size_t>(n) * size;
    std::memcpy(out, from, bytes);
    return out + bytes;
  }
  switch (size) {
    case 1:
      return CopyRow<1>(from, n, stride, out);
    case 2:
      return CopyRow<2>(from, n, stride, out);
    case 4:
      return CopyRow<4>(from, n, stride, out);
    case 8:
      return CopyRow<8>(from, n, stride, out);
    case 16:
      return CopyRow<16>(from, n, stride, out);
    default:
      break;
  }
  const auto step = static_cast<ptrdiff_t>(stride) * size;
  for (int64_t i = 0; i < n; ++i, from += step, out += size) {
    std::memcpy(out, from, size);
  }
  return out;
}

}  // namespace

void CopyStrided(const std::byte* first, std::span<const int64_t> sizes,
                 std::span<const int64_t> strides, size_t element_size,
                 std::byte* out) {
  const size_t ndim = sizes.size();
  if (ndim == 0) {
    std::memcpy(out, first, element_size);
    return;
  }
  const size_t last = ndim - 1;
  int64_t rows = 1;  // one per index over the outer dimensions
  for (size_t d = 0; d < last; ++d) rows *= sizes[d];
  // That index, odometer-wise, and the first element of its row.
  std::array<int64_t, record::kMaxDims> index{};
  const std::byte* row = first;
  for (int64_t r = 0; r < rows; ++r) {
    out = CopyRow(row, sizes[last], strides[last], element_size, out);
    for (size_t d = last; d-- > 0;) {
      const auto step = static_cast<ptrdiff_t>(strides[d]) *
                        static_cast<ptrdiff_t>(element_size);
      if (++index[d] < sizes[d]) {
        row += step;
        break;
      }
      row -= step * (sizes[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace tprobe::python
