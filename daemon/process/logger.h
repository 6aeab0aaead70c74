#ifndef TPROBE_DAEMON_PROCESS_LOGGER_H_
#define TPROBE_DAEMON_PROCESS_LOGGER_H_

// tprobed's logger: its own named spdlog logger writing to stderr (which is
// tprobed.log once the daemon has detached). It is never registered as
// spdlog's global default; components receive it by constructor injection.

#include <spdlog/spdlog.h>

#include <memory>

namespace tprobe::daemon {

using Logger = std::shared_ptr<spdlog::logger>;

// A logger named "tprobed" at `level`; every line is flushed at once so the
// log is current when the daemon is killed.
Logger MakeLogger(spdlog::level::level_enum level);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_PROCESS_LOGGER_H_
