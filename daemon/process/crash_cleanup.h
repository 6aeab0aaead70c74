#ifndef TPROBE_DAEMON_PROCESS_CRASH_CLEANUP_H_
#define TPROBE_DAEMON_PROCESS_CRASH_CLEANUP_H_

// What a tprobed that died without cleaning up leaves behind, and how its
// successor removes it: the temporary files of half-written dump files
// ("NAME.tmp<pid>", "NAME.link<pid>", written by the daemon with that pid).
// (Its shared-memory segments are memory files that the kernel frees with
// their last user: nothing of them is left.)
// Something belongs to a dead daemon when no process with its pid runs, or
// the one that does is not a tprobed. Live daemons' files are never touched,
// so several daemons on one machine can each clean up at start.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tprobe::daemon {

// "tprobe.<uid>.<pid>.<client_id>.<daemon pid>": the label of the segment
// of client process `pid` of user `uid`, created by this daemon (it shows
// in /proc/PID/maps as "/memfd:" and the label).
std::string SegmentName(uid_t uid, int32_t pid, uint64_t client_id);

// True when `pid` is a running tprobed.
bool IsRunningDaemon(int64_t pid);

// Removes the temporary files of daemons that are not running from the
// rank folders of `write_path` (step*/rank{R} and their dump_tensor_data).
// Returns how many were removed.
size_t RemoveStaleTempFiles(const std::string& write_path, int rank);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_PROCESS_CRASH_CLEANUP_H_
