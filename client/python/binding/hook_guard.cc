// The binding's no-throw boundary (hook_guard.h).

#include "client/python/binding/hook_guard.h"

#include <cstdio>

namespace tprobe::python {

std::atomic<uint64_t>& UnattributedFailures() {
  static std::atomic<uint64_t> failures{0};
  return failures;
}

void CountHookFailure(std::atomic<uint64_t>& failures, const char* where,
                      const char* what) noexcept {
  if (failures.fetch_add(1, std::memory_order_relaxed) != 0) return;
  std::fprintf(stderr,
               "tprobe: %s failed (%s); what it would have recorded is left "
               "out of the dump, and every such failure is counted in "
               "Session.counters()['hook_failures']\n",
               where, what);
}

}  // namespace tprobe::python
