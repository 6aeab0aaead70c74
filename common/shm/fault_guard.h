#ifndef TPROBE_COMMON_SHM_FAULT_GUARD_H_
#define TPROBE_COMMON_SHM_FAULT_GUARD_H_

// Survives a bus error on a mapping that another process can shrink.
//
// A mapped file that another process truncates raises SIGBUS on the next
// access past its new end, and SIGBUS kills by default: for a node daemon,
// one hostile or broken client would end capture for every rank. A
// FaultGuard watches one mapping. When a bus error hits inside a watched
// mapping, the process's SIGBUS handler maps zero-filled private memory over
// the whole mapping and marks the guard faulted; the faulting access is then
// retried and reads zeros, as do all later ones. The owner checks faulted()
// and stops trusting the mapping (it is garbage, but memory).
//
// A bus error outside every watched mapping keeps what it did before: the
// handler installed before the first guard (a sanitizer's, say) runs, or
// the default action ends the process.
//
// Costs: nothing until a fault; at most kMaxWatched mappings at once.
//
// Thread safety: Watch, ~FaultGuard and faulted() may be called from any
// thread. The handler runs on the faulting thread; it only reads atomics
// and calls mmap and sigaction.

#include <cstddef>
#include <memory>

#include "common/status.h"

namespace tprobe::shm {

class FaultGuard {
 public:
  static constexpr size_t kMaxWatched = 4096;

  // Watches [address, address + bytes), installing the SIGBUS handler on
  // first use. Returns an error when kMaxWatched mappings are watched
  // already, or when the handler cannot be installed.
  // REQUIRES: address is page-aligned and the range is one mapping that
  // outlives the guard.
  static Result<std::unique_ptr<FaultGuard>> Watch(void* address, size_t bytes);

  // Stops watching; the mapping itself is the owner's to unmap.
  ~FaultGuard();
  FaultGuard(const FaultGuard&) = delete;
  FaultGuard& operator=(const FaultGuard&) = delete;

  // True once a bus error hit the mapping: it now reads zeros.
  bool faulted() const;

 private:
  explicit FaultGuard(size_t slot) : slot_(slot) {}
  size_t slot_;
};

}  // namespace tprobe::shm

#endif  // TPROBE_COMMON_SHM_FAULT_GUARD_H_
