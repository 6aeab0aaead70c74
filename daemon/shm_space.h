#ifndef TPROBE_DAEMON_SHM_SPACE_H_
#define TPROBE_DAEMON_SHM_SPACE_H_

// Whether rings fit in /dev/shm. A segment larger than the free space of
// the tmpfs behind /dev/shm is created without complaint (it is sparse) and
// then kills whoever touches its missing pages with SIGBUS: in a container
// whose /dev/shm is the default 64 MiB, that is the daemon or the trainer.
// So the space is checked before a segment is made, and the refusal says
// how to size /dev/shm (README, "Sizing /dev/shm").

#include <cstdint>
#include <string>

#include "common/status.h"

namespace tprobe::daemon {

// Ok when `bytes` more fit in the file system of `dir` (/dev/shm), else an
// error giving both sizes and what to change. `what` names the need
// ("the rings of rank 3", "--expect-ranks 8 ranks of the default rings").
Status CheckShmSpace(uint64_t bytes, const std::string& what,
                     const std::string& dir = "/dev/shm");

// The start-up check of --expect-ranks: `ranks` segments of the default
// ring geometry (config.h) fit. Ok for 0 ranks.
Status CheckExpectedRanks(int ranks, const std::string& dir = "/dev/shm");

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_SHM_SPACE_H_
