#ifndef TPROBE_COMMON_SHM_DIRECTIVE_H_
#define TPROBE_COMMON_SHM_DIRECTIVE_H_

// The live capture directive: what `tprobe start` and `tprobe stop` tell a
// running rank, through one 64-bit word of its segment header
// (SegmentHeader::directive) that the daemon stores and the client reads
// when a step starts or ends, so that it takes effect within one step
// without any message to the trainer.
//
//   bits 63-62  mode: 0 follow the config, 1 capture, 2 pause
//   bits 61-31  first step to capture (mode 1)
//   bits 30-0   last step to capture (mode 1); kOpenEnded: no last step

#include <cstdint>

namespace tprobe::shm {

enum class CaptureMode : uint8_t { kConfig = 0, kCapture = 1, kPause = 2 };

inline constexpr uint32_t kOpenEnded = (1u << 31) - 1;
inline constexpr uint32_t kMaxDirectiveStep = kOpenEnded - 1;

struct Directive {
  CaptureMode mode = CaptureMode::kConfig;
  uint32_t first_step = 0;
  uint32_t last_step = kOpenEnded;

  // Whether `step` is captured under a kCapture directive.
  bool Covers(uint32_t step) const {
    return step >= first_step && (last_step == kOpenEnded || step <= last_step);
  }
};

// REQUIRES: steps at most kMaxDirectiveStep, or last_step kOpenEnded.
constexpr uint64_t EncodeDirective(const Directive& d) {
  return (static_cast<uint64_t>(d.mode) << 62) |
         (static_cast<uint64_t>(d.first_step & kOpenEnded) << 31) |
         (d.last_step & kOpenEnded);
}

constexpr Directive DecodeDirective(uint64_t word) {
  Directive d;
  const auto mode = static_cast<uint8_t>(word >> 62);
  d.mode = mode <= 2 ? static_cast<CaptureMode>(mode) : CaptureMode::kConfig;
  d.first_step = static_cast<uint32_t>((word >> 31) & kOpenEnded);
  d.last_step = static_cast<uint32_t>(word & kOpenEnded);
  return d;
}

}  // namespace tprobe::shm

#endif  // TPROBE_COMMON_SHM_DIRECTIVE_H_
