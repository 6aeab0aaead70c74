#ifndef TPROBE_TESTS_SUPPORT_COUNTING_ALLOCATOR_H_
#define TPROBE_TESTS_SUPPORT_COUNTING_ALLOCATOR_H_

// For allocation tests: counting_allocator.cc replaces the global operator
// new with one that counts, per thread, every allocation made through it
// (every form libstdc++ has: plain, array, nothrow, aligned). Link
// counting_allocator.cc into the test's own executable only (tests/
// CMakeLists.txt: tprobe_add_test(... COUNTS_ALLOCATIONS)), so that it
// touches no other test.
//
// Thread safety: each thread reads its own count.

#include <cstdint>

namespace tprobe::testing {

// Allocations the calling thread made since it started.
uint64_t ThreadAllocations();

// While set, every allocation of the calling thread throws std::bad_alloc
// (as on a machine out of memory), counted all the same.
void FailThreadAllocations(bool fail);

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_SUPPORT_COUNTING_ALLOCATOR_H_
