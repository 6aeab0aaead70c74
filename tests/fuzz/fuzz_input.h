#ifndef TPROBE_TESTS_FUZZ_FUZZ_INPUT_H_
#define TPROBE_TESTS_FUZZ_FUZZ_INPUT_H_

// Helpers shared by the libFuzzer targets of tests/fuzz: a cursor that takes
// fixed-size values off the front of the input, and an in-memory file
// (memfd) for the readers that take a path.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace tprobe::fuzz {

// Reads little-endian integers and byte runs off the front of the input;
// past the end it yields zeros and empty runs.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  template <typename T>
  T Take() {
    T v{};
    const size_t n = sizeof(T) < left() ? sizeof(T) : left();
    std::memcpy(&v, data_ + pos_, n);
    pos_ += n;
    return v;
  }
  std::span<const std::byte> Bytes(size_t n) {
    n = n < left() ? n : left();
    std::span<const std::byte> out(
        reinterpret_cast<const std::byte*>(data_ + pos_), n);
    pos_ += n;
    return out;
  }
  std::span<const std::byte> Rest() { return Bytes(left()); }
  size_t left() const { return size_ - pos_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A file that lives in memory only, reachable by path as
// /proc/self/fd/N, so each run reads a file without touching a disk.
class MemoryFile {
 public:
  MemoryFile() : fd_(::memfd_create("tprobe-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  // Makes the file hold exactly `bytes`; returns its path.
  const std::string& Hold(std::span<const std::byte> bytes) {
    if (::ftruncate(fd_, 0) != 0 ||
        ::pwrite(fd_, bytes.data(), bytes.size(), 0) !=
            static_cast<ssize_t>(bytes.size())) {
      std::perror("memfd write");
      std::abort();
    }
    return path_;
  }
  const std::string& Hold(std::string_view text) {
    return Hold(std::as_bytes(std::span(text.data(), text.size())));
  }

 private:
  int fd_;
  std::string path_;
};

// Aborts (a crash libFuzzer reports, with the input) when a property that
// must hold for every input does not.
inline void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "property violated: %s\n", what);
    std::abort();
  }
}

}  // namespace tprobe::fuzz

#endif  // TPROBE_TESTS_FUZZ_FUZZ_INPUT_H_
