#ifndef TPROBE_DAEMON_PROCESS_FLAGS_H_
#define TPROBE_DAEMON_PROCESS_FLAGS_H_

// The command line of tprobed. Each flag is declared once (flags.cc, with
// CLI11), and both ParseFlags() and Usage(), which `tprobed --help`
// prints, come from that; main() turns a parse error into a message on
// stderr and exit status 2.

#include <spdlog/common.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace tprobe::daemon {

struct Flags {
  // The control socket (--socket), already resolved: the flag, else
  // $TPROBE_SOCKET, else control::DefaultSocketPath().
  std::string socket;
  // --foreground: log to stderr and stay attached. Otherwise tprobed forks
  // into the background and logs to LogFilePath(socket).
  bool foreground = false;
  spdlog::level::level_enum log_level = spdlog::level::info;
  // --idle-exit: exit once no client has been connected for this long
  // (counted from start-up and from each moment the last client leaves).
  // Zero means never.
  std::chrono::seconds idle_exit{0};
  // --group: members of this group may use the daemon too (empty: only the
  // daemon's own user and root).
  std::string group;
  // --max-connections: control connections served at once.
  int max_connections = 256;
  // --request-timeout: how long an unregistered connection may stay silent,
  // or any connection may take to finish a frame it began.
  std::chrono::seconds request_timeout{30};
  // --expect-ranks: refuse to start unless this many ranks' default rings
  // fit in the memory available (0: no check).
  int expect_ranks = 0;
  // --workers: drain worker threads; 0 (the default) means one per core.
  unsigned workers = 0;
  // --max-tensor-bytes: the largest tensor a client may declare; larger
  // ones are never buffered and are written with null statistics.
  uint64_t max_tensor_bytes = uint64_t{4} << 30;
  // --max-open-steps: open steps per rank before its drain stops reading
  // ahead (RankLimits::max_open_steps).
  size_t max_open_steps = 64;
  // --max-open-bytes: the bytes one rank's open steps may hold before its
  // drain stops reading ahead (RankLimits::max_open_bytes).
  uint64_t max_open_bytes = uint64_t{1} << 30;
  // --help: print Usage() and exit 0; nothing else is done.
  bool help = false;
};

// Parses argv[1..argc-1]. Accepts "--flag value" and "--flag=value". Returns
// an error that names the offending flag or value and what is accepted.
Result<Flags> ParseFlags(int argc, const char* const* argv);

// The --help text: what tprobed does and what each flag means.
std::string Usage();

// Where a background tprobed logs: tprobed.log in the socket's directory.
std::string LogFilePath(const std::string& socket_path);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_PROCESS_FLAGS_H_
