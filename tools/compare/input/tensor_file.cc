// Memory-mapped .npy tensors (tensor_file.h).

#include "tools/compare/input/tensor_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <complex>
#include <cstring>
#include <utility>

#include "common/dump/npy.h"
#include "common/stats/half.h"
#include "tools/compare/input/pt_file.h"

namespace tprobe::compare {
namespace {

template <typename T>
T Load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void Convert(const std::byte* data, size_t begin, std::span<double> out) {
  const std::byte* p = data + begin * sizeof(T);
  for (size_t i = 0; i < out.size(); ++i, p += sizeof(T)) {
    out[i] = static_cast<double>(Load<T>(p));
  }
}

}  // namespace

Result<MappedTensor> MappedTensor::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status::Error(path + ": cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Error(path + ": not a regular file");
  }
  MappedTensor tensor;
  tensor.map_size_ = static_cast<size_t>(st.st_size);
  if (tensor.map_size_ > 0) {
    void* map =
        ::mmap(nullptr, tensor.map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return Status::Error(path + ": cannot map: " + std::strerror(err));
    }
    tensor.map_ = map;
    ::madvise(map, tensor.map_size_, MADV_SEQUENTIAL);
  }
  ::close(fd);
  const std::span<const std::byte> file(
      static_cast<const std::byte*>(tensor.map_), tensor.map_size_);
  if (path.ends_with(".pt")) {
    Result<PtLayout> pt = ParsePtLayout(path, file);
    if (!pt.ok()) return pt.status();
    tensor.dtype_ = pt->dtype;
    tensor.shape_ = std::move(pt->shape);
    tensor.data_ = file.data() + pt->data_offset;
    tensor.count_ = pt->count;
    tensor.bf16_raw_ = pt->dtype == DType::kBFloat16;
    return tensor;
  }
  Result<dump::NpyLayout> layout = dump::ParseNpyLayout(path, file);
  if (!layout.ok()) return layout.status();
  tensor.dtype_ = layout->dtype;
  tensor.shape_ = std::move(layout->shape);
  tensor.data_ = file.data() + layout->data_offset;
  tensor.count_ = layout->data_bytes / ElementSize(layout->dtype);
  return tensor;
}

MappedTensor::MappedTensor(MappedTensor&& other) noexcept {
  *this = std::move(other);
}

MappedTensor& MappedTensor::operator=(MappedTensor&& other) noexcept {
  if (this != &other) {
    if (map_ != nullptr) ::munmap(map_, map_size_);
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    data_ = std::exchange(other.data_, nullptr);
    dtype_ = other.dtype_;
    shape_ = std::move(other.shape_);
    count_ = std::exchange(other.count_, 0);
    bf16_raw_ = other.bf16_raw_;
  }
  return *this;
}

MappedTensor::~MappedTensor() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
}

void MappedTensor::ToDouble(size_t begin, std::span<double> out) const {
  switch (dtype_) {
    case DType::kBFloat16:
      if (bf16_raw_) {
        const std::byte* p = data_ + begin * 2;
        for (size_t i = 0; i < out.size(); ++i, p += 2) {
          const uint32_t bits = uint32_t{Load<uint16_t>(p)} << 16;
          float f;
          std::memcpy(&f, &bits, sizeof f);
          out[i] = f;
        }
        return;
      }
      return Convert<float>(data_, begin, out);  // its float32 upcast
    case DType::kFloat32:
      return Convert<float>(data_, begin, out);
    case DType::kFloat64:
      return Convert<double>(data_, begin, out);
    case DType::kFloat16: {
      const std::byte* p = data_ + begin * 2;
      for (size_t i = 0; i < out.size(); ++i, p += 2) {
        out[i] = stats::HalfToFloat(Load<uint16_t>(p));
      }
      return;
    }
    case DType::kInt8:
      return Convert<int8_t>(data_, begin, out);
    case DType::kUInt8:
      return Convert<uint8_t>(data_, begin, out);
    case DType::kInt16:
      return Convert<int16_t>(data_, begin, out);
    case DType::kInt32:
      return Convert<int32_t>(data_, begin, out);
    case DType::kInt64:
      return Convert<int64_t>(data_, begin, out);
    case DType::kBool: {
      const std::byte* p = data_ + begin;
      for (size_t i = 0; i < out.size(); ++i) {
        out[i] = p[i] != std::byte{0} ? 1.0 : 0.0;
      }
      return;
    }
    case DType::kComplex64: {
      const std::byte* p = data_ + begin * 8;
      for (size_t i = 0; i < out.size(); ++i, p += 8) {
        out[i] =
            std::abs(std::complex<double>(Load<float>(p), Load<float>(p + 4)));
      }
      return;
    }
    case DType::kComplex128: {
      const std::byte* p = data_ + begin * 16;
      for (size_t i = 0; i < out.size(); ++i, p += 16) {
        out[i] = std::abs(
            std::complex<double>(Load<double>(p), Load<double>(p + 8)));
      }
      return;
    }
  }
}

}  // namespace tprobe::compare
