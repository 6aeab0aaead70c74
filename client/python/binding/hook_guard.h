// The binding's one no-throw boundary. Every tprobe._C entry point that a
// hook calls runs its body through GuardHook: an exception it throws
// (pybind11's error_already_set, std::bad_alloc, a core failure) stops at
// the boundary, is counted in the caller's failure counter (Session.
// counters()['hook_failures']), the first one is named on stderr, and the
// call returns its fallback. No exception crosses into the trainer.
//
// Thread safety: the counter is atomic; the rest is the caller's.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_HOOK_GUARD_H_
#define TPROBE_CLIENT_PYTHON_BINDING_HOOK_GUARD_H_

#include <atomic>
#include <cstdint>
#include <exception>
#include <type_traits>
#include <utility>

namespace tprobe::python {

// Counts one failure of `where` that a guard stopped; the first on
// `failures` is named on stderr with `what`.
void CountHookFailure(std::atomic<uint64_t>& failures, const char* where,
                      const char* what) noexcept;

// The counter of failures no session can be charged with (finding the
// session itself); every Session's counters()['hook_failures'] includes it.
std::atomic<uint64_t>& UnattributedFailures();

// body(), or, when it throws, the failure counted and R(fallback...)
// returned (R: what body returns; void takes no fallback).
template <typename Body, typename... Fallback>
auto GuardHook(std::atomic<uint64_t>& failures, const char* where, Body&& body,
               Fallback&&... fallback) noexcept {
  using R = decltype(body());
  static_assert(std::is_void_v<R> == (sizeof...(Fallback) == 0),
                "a value-returning body needs its fallback");
  try {
    return body();
  } catch (const std::exception& e) {
    CountHookFailure(failures, where, e.what());
  } catch (...) {
    CountHookFailure(failures, where, "an unknown exception");
  }
  if constexpr (!std::is_void_v<R>) {
    return R(std::forward<Fallback>(fallback)...);
  }
}

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_HOOK_GUARD_H_
