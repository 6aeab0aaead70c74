// The global operator new of an allocation test, counting per thread
// (counting_allocator.h).

#include "tests/support/counting_allocator.h"

#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
thread_local uint64_t t_allocations = 0;
thread_local bool t_fail = false;
}  // namespace

uint64_t tprobe::testing::ThreadAllocations() { return t_allocations; }

void tprobe::testing::FailThreadAllocations(bool fail) { t_fail = fail; }

// Every other form (arrays, nothrow) of libstdc++ calls one of these two.
void* operator new(std::size_t size) {
  ++t_allocations;
  if (t_fail) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t align) {
  ++t_allocations;
  if (t_fail) throw std::bad_alloc();
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
