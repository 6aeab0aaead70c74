#include "common/shm/fault_guard.h"

#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace tprobe::shm {
namespace {

// One watched mapping. `begin` is 0 for a free slot and kClaimed while
// Watch fills it in; the handler only looks at slots with a real address.
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> faulted{false};
};

constexpr uintptr_t kClaimed = 1;

Slot g_slots[FaultGuard::kMaxWatched];
// What SIGBUS did before the first guard; written once, before any slot
// holds an address.
struct sigaction g_previous;

// Hands a fault that is not ours to what handled SIGBUS before.
void Chain(int sig, siginfo_t* info, void* context) {
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 &&
      g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  // Default (or ignored, which a retried access would turn into a spin):
  // returning retries the access, which now ends the process.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGBUS, &dfl, nullptr);
}

void OnBusError(int sig, siginfo_t* info, void* context) {
  const auto at = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& slot : g_slots) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin <= kClaimed || at < begin) continue;
    const uintptr_t end = slot.end.load(std::memory_order_relaxed);
    if (at >= end) continue;
    const int saved = errno;
    void* zeros = ::mmap(reinterpret_cast<void*>(begin), end - begin,
                         PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    errno = saved;
    if (zeros == MAP_FAILED) break;
    slot.faulted.store(true, std::memory_order_release);
    return;
  }
  Chain(sig, info, context);
}

// Installs OnBusError once per process; returns errno, or 0.
int InstallHandler() {
  static const int error = [] {
    struct sigaction action {};
    action.sa_sigaction = OnBusError;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    return ::sigaction(SIGBUS, &action, &g_previous) == 0 ? 0 : errno;
  }();
  return error;
}

}  // namespace

Result<std::unique_ptr<FaultGuard>> FaultGuard::Watch(void* address,
                                                      size_t bytes) {
  if (int err = InstallHandler(); err != 0) {
    return Status::Error(std::string("cannot install the SIGBUS handler: ") +
                         std::strerror(err));
  }
  const auto begin = reinterpret_cast<uintptr_t>(address);
  for (size_t i = 0; i < kMaxWatched; ++i) {
    uintptr_t expected = 0;
    if (!g_slots[i].begin.compare_exchange_strong(expected, kClaimed,
                                                  std::memory_order_acq_rel)) {
      continue;
    }
    g_slots[i].end.store(begin + bytes, std::memory_order_relaxed);
    g_slots[i].faulted.store(false, std::memory_order_relaxed);
    g_slots[i].begin.store(begin, std::memory_order_release);
    return std::unique_ptr<FaultGuard>(new FaultGuard(i));
  }
  return Status::Error("cannot watch more than " + std::to_string(kMaxWatched) +
                       " shared memory mappings at once");
}

FaultGuard::~FaultGuard() {
  g_slots[slot_].begin.store(0, std::memory_order_release);
}

bool FaultGuard::faulted() const {
  return g_slots[slot_].faulted.load(std::memory_order_acquire);
}

}  // namespace tprobe::shm
