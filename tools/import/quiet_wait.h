#ifndef TPROBE_TOOLS_IMPORT_QUIET_WAIT_H_
#define TPROBE_TOOLS_IMPORT_QUIET_WAIT_H_

// Waiting for a dump directory that is still being written (`--wait N`).

#include <chrono>
#include <string>

#include "common/status.h"
#include "tools/common/reporter.h"

namespace tprobe::import {

// Blocks until nothing under `dir` has changed for `quiet`: no file or
// directory added, removed, resized or modified. Changes are seen through
// the newest modification time under `dir` and through the number and
// total size of its entries, polled every half second, so a file copied in
// with an old time still counts as new. Returns at once when `dir` has
// already been quiet that long. Logs one line through `reporter` when it
// has to wait.
//
// Returns an error when `dir` cannot be read.
Status WaitUntilQuiet(const std::string& dir, std::chrono::seconds quiet,
                      tools::Reporter& reporter);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_QUIET_WAIT_H_
