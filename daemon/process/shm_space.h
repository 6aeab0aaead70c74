#ifndef TPROBE_DAEMON_PROCESS_SHM_SPACE_H_
#define TPROBE_DAEMON_PROCESS_SHM_SPACE_H_

// Whether rings fit in memory. A segment (common/shm/segment.h) is a memory
// file whose every page the daemon allocates when it creates it: rings
// larger than the memory left would push the node into swap or the OOM
// killer before the allocation failed. So the space is checked before a
// segment is made, against the memory the kernel reports available
// (MemAvailable) and, where tprobed runs in a memory cgroup with a limit
// (cgroup v2 memory.max), what is left under that limit; the refusal gives
// both sizes and what to change.
//
// Thread safety: reads /proc and /sys only; any thread.

#include <cstdint>
#include <string>

#include "common/status.h"

namespace tprobe::daemon {

// Ok when `bytes` more fit in the memory available to this process, else
// an error giving both sizes, where the limit comes from and what to change.
// `what` names the need ("the rings of rank 3", "--expect-ranks 8: ...").
Status CheckShmSpace(uint64_t bytes, const std::string& what);

// The start-up check of --expect-ranks: `ranks` segments of the default
// ring geometry (config.h) fit. Ok for 0 ranks.
Status CheckExpectedRanks(int ranks);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_PROCESS_SHM_SPACE_H_
