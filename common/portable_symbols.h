#ifndef TPROBE_COMMON_PORTABLE_SYMBOLS_H_
#define TPROBE_COMMON_PORTABLE_SYMBOLS_H_

// Older versions of the few glibc and libstdc++ symbols whose newest
// version alone would raise a self-contained wheel's manylinux tag
// (deploy/wheel.sh): hypot and hypotf gained a GLIBC_2.35 version (2_35),
// and libstdc++ 12 gave condition_variable::wait a GLIBCXX_3.4.30 one
// (beyond manylinux_2_34's libstdc++). Each older version computes the same
// thing. A file that calls one of them includes this (anywhere: a .symver
// directive covers the whole object file); the build defines
// TPROBE_SELF_CONTAINED for those files only (common/ and daemon/
// CMakeLists.txt), so other builds are untouched.

#if defined(TPROBE_SELF_CONTAINED) && defined(__GLIBC__) && defined(__x86_64__)
__asm__(".symver hypot,hypot@GLIBC_2.2.5");
__asm__(".symver hypotf,hypotf@GLIBC_2.2.5");
__asm__(
    ".symver _ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE,"
    "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE@GLIBCXX_3.4.11");
#endif

#endif  // TPROBE_COMMON_PORTABLE_SYMBOLS_H_
