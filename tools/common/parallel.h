#ifndef TPROBE_TOOLS_COMMON_PARALLEL_H_
#define TPROBE_TOOLS_COMMON_PARALLEL_H_

// A fork-join loop over a fixed number of std::threads.

#include <cstddef>
#include <functional>

namespace tprobe::tools {

// The default number of worker threads: std::thread::hardware_concurrency,
// or 1 when it is unknown.
size_t DefaultThreadCount();

// Runs fn(i) for every i in [0, n) on min(threads, n) threads (the calling
// thread among them) and returns when all calls have returned. Indices are
// handed out in increasing order; which thread runs which is unspecified.
// `threads` 0 means DefaultThreadCount().
//
// REQUIRES: fn does not throw, and is safe to call concurrently for
// distinct indices.
void ParallelFor(size_t n, size_t threads,
                 const std::function<void(size_t)>& fn);

}  // namespace tprobe::tools

#endif  // TPROBE_TOOLS_COMMON_PARALLEL_H_
