#ifndef TPROBE_COMMON_STATS_CPU_FEATURES_H_
#define TPROBE_COMMON_STATS_CPU_FEATURES_H_

// The x86-64 instruction sets the statistics kernels pick at run time,
// asked of the CPU with cpuid once per process. Not __builtin_cpu_supports:
// its __cpu_model lives in libgcc, which the wheels' toolchain (zig's
// compiler runtime, deploy/wheel.sh) does not provide.

#if defined(__x86_64__)
#include <cpuid.h>

#include <cstdint>

namespace tprobe::stats {

// AVX2 and FMA, and the OS saves the YMM registers (XCR0 bits 1 and 2).
inline bool CpuHasAvx2Fma() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    if (!(c & bit_OSXSAVE) || !(c & bit_AVX) || !(c & bit_FMA)) return false;
    uint32_t xcr0 = 0, xcr0_high = 0;
    __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
    if ((xcr0 & 6u) != 6u) return false;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return (b & bit_AVX2) != 0;
  }();
  return has;
}

// Carry-less multiplication (PCLMULQDQ).
inline bool CpuHasPclmul() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_PCLMUL) != 0;
  }();
  return has;
}

}  // namespace tprobe::stats

#endif  // __x86_64__

#endif  // TPROBE_COMMON_STATS_CPU_FEATURES_H_
