// A strided tensor's elements gathered into row-major order: what torch's
// contiguous() makes of it, for a small CPU tensor read through torch's C
// shim (tensor_shim.h), without the Python call, the op dispatch and the
// allocation that contiguous() costs (about 18,000 instructions a tensor
// against a few hundred here).
//
// Thread safety: a pure function.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_STRIDED_COPY_H_
#define TPROBE_CLIENT_PYTHON_BINDING_STRIDED_COPY_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace tprobe::python {

// Copies the elements of the tensor whose first element is at `first`, with
// `sizes` and `strides` (in elements, none negative; as many of each, at
// most record::kMaxDims),
// `element_size` bytes each, into `out` in row-major order: product(sizes) *
// element_size bytes. A zero-dimensional tensor is one element.
void CopyStrided(const std::byte* first, std::span<const int64_t> sizes,
                 std::span<const int64_t> strides, size_t element_size,
                 std::byte* out);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_STRIDED_COPY_H_
