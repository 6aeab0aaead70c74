#ifndef TPROBE_TESTS_SUPPORT_SANITIZERS_H_
#define TPROBE_TESTS_SUPPORT_SANITIZERS_H_

// Whether this test binary is built with AddressSanitizer. ASan keeps freed
// memory in its quarantine (256 MB by default), so a process's RSS grows
// with every allocation it ever made: tests that bound a daemon's memory
// check it only without ASan.

namespace tprobe::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_SUPPORT_SANITIZERS_H_
