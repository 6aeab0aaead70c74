#ifndef TPROBE_COMMON_RECORD_LOSSES_H_
#define TPROBE_COMMON_RECORD_LOSSES_H_

// Why a rank's record was never written: each reason is named once, here,
// and every count of them (the ring header, the client's totals, a step's
// ledger, tprobe.json, control.proto, `tprobe status`) is derived from these
// lists. The lists nest, narrowest first:
//   ring_full    no space in the ring (policy drop, or block timed out)
//   too_large    a record larger than half the ring (never chunked)
//     -- the two the ring header counts (shm::DropReason) --
//   no_daemon    no daemon attached, or held back after one came
//     -- the three a rank counts (client/recorder.h) --
//   daemon_gone  committed, then left unread by a daemon that went away
//     -- the four a step's ledger settles (control.proto StepLedger) --
// Each list calls X(name) once per reason, in the order every document lists
// them. `name` is the key in tprobe.json's "dropped" objects and, behind
// "dropped_", the field of control.proto (StepLedger, Outage, RankStatus),
// of `tprobe status --json` and of the C++ SDK's ClientCounters.
//
// Thread safety: plain values.

#include <cstdint>

#include "common/shm/layout.h"

#define TPROBE_RING_LOSSES(X) X(ring_full) X(too_large)
#define TPROBE_RANK_LOSSES(X) TPROBE_RING_LOSSES(X) X(no_daemon)
#define TPROBE_STEP_LOSSES(X) TPROBE_RANK_LOSSES(X) X(daemon_gone)

namespace tprobe {

// A struct of one counter per reason of LIST, with its total, element-wise
// + and -, and ForEach(f), which calls f("name", count) per reason in order.
#define TPROBE_LOSS_FIELD_(name) uint64_t name = 0;
#define TPROBE_LOSS_VISIT_(name) f(#name, name);
#define TPROBE_LOSS_PLUS_(name) +name
#define TPROBE_LOSS_ADD_(name) name += o.name;
#define TPROBE_LOSS_SUB_(name) r.name = name - o.name;
#define TPROBE_DEFINE_LOSSES_(Type, LIST)                        \
  struct Type {                                                  \
    LIST(TPROBE_LOSS_FIELD_)                                     \
    uint64_t Total() const { return 0 LIST(TPROBE_LOSS_PLUS_); } \
    Type& operator+=(const Type& o) {                            \
      LIST(TPROBE_LOSS_ADD_)                                     \
      return *this;                                              \
    }                                                            \
    Type operator-(const Type& o) const {                        \
      Type r;                                                    \
      LIST(TPROBE_LOSS_SUB_)                                     \
      return r;                                                  \
    }                                                            \
    template <typename F>                                        \
    void ForEach(F&& f) const {                                  \
      LIST(TPROBE_LOSS_VISIT_)                                   \
    }                                                            \
    bool operator==(const Type&) const = default;                \
  };

TPROBE_DEFINE_LOSSES_(RingLosses, TPROBE_RING_LOSSES)
TPROBE_DEFINE_LOSSES_(RankLosses, TPROBE_RANK_LOSSES)
TPROBE_DEFINE_LOSSES_(StepLosses, TPROBE_STEP_LOSSES)

#undef TPROBE_DEFINE_LOSSES_
#undef TPROBE_LOSS_SUB_
#undef TPROBE_LOSS_ADD_
#undef TPROBE_LOSS_PLUS_
#undef TPROBE_LOSS_VISIT_
#undef TPROBE_LOSS_FIELD_

// The ring header's counters, one per reason of TPROBE_RING_LOSSES, indexed
// by shm::DropReason in the same order.
static_assert(static_cast<int>(shm::DropReason::kRingFull) == 0 &&
              static_cast<int>(shm::DropReason::kTooLarge) == 1 &&
              static_cast<size_t>(shm::DropReason::kCount) ==
                  sizeof(RingLosses) / sizeof(uint64_t));

// The losses a ring header shows (relaxed loads: a display value or a
// total that only grows).
inline RingLosses RingLossesOf(const shm::RingHeader& h) {
  RingLosses l;
  l.ring_full = h.dropped[static_cast<size_t>(shm::DropReason::kRingFull)].load(
      std::memory_order_relaxed);
  l.too_large = h.dropped[static_cast<size_t>(shm::DropReason::kTooLarge)].load(
      std::memory_order_relaxed);
  return l;
}

}  // namespace tprobe

#endif  // TPROBE_COMMON_RECORD_LOSSES_H_
