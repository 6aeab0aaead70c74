#include "tools/common/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace tprobe::tools {

size_t DefaultThreadCount() {
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

void ParallelFor(size_t n, size_t threads,
                 const std::function<void(size_t)>& fn) {
  if (threads == 0) threads = DefaultThreadCount();
  threads = std::min(threads, n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> workers;
  workers.reserve(threads > 0 ? threads - 1 : 0);
  for (size_t t = 1; t < threads; ++t) workers.emplace_back(work);
  work();
  for (std::thread& worker : workers) worker.join();
}

}  // namespace tprobe::tools
