#include "daemon/process/flags.h"

#include <unistd.h>

#include <charconv>
#include <optional>
#include <string_view>

#include "common/control/socket_path.h"
#include "daemon/process/private_dir.h"

namespace tprobe::daemon {
namespace {

// One day: longer idle times are almost certainly a unit mistake.
constexpr int64_t kMaxIdleExitSeconds = 24 * 3600;
constexpr int64_t kMaxWorkers = 1024;
constexpr int64_t kMinTensorBytes = 4096;
constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;
constexpr int64_t kMaxOpenSteps = 1 << 16;
constexpr int64_t kMinOpenBytes = int64_t{1} << 20;
constexpr int64_t kMaxOpenBytes = int64_t{1} << 40;

std::optional<spdlog::level::level_enum> ParseLevel(std::string_view text) {
  if (text == "trace") return spdlog::level::trace;
  if (text == "debug") return spdlog::level::debug;
  if (text == "info") return spdlog::level::info;
  if (text == "warn") return spdlog::level::warn;
  if (text == "error") return spdlog::level::err;
  return std::nullopt;
}

// A whole number in [min, max], or nullopt.
std::optional<int64_t> ParseNumber(std::string_view text, int64_t min,
                                   int64_t max) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min ||
      value > max) {
    return std::nullopt;
  }
  return value;
}

// The value of numeric flag `arg`, a whole number in [min, max]; else an
// error "bad ARG 'VALUE': use WHAT from MIN to MAX", or "use LOW to MAX"
// when `low` describes the minimum.
Result<int64_t> Bounded(std::string_view arg, std::string_view value,
                        int64_t min, int64_t max, std::string_view what,
                        std::string_view low = {}) {
  if (auto n = ParseNumber(value, min, max)) return *n;
  const std::string range =
      low.empty() ? std::string(what) + " from " + std::to_string(min)
                  : std::string(low);
  return Status::Error("bad " + std::string(arg) + " '" + std::string(value) +
                       "': use " + range + " to " + std::to_string(max));
}

}  // namespace

Result<Flags> ParseFlags(int argc, const char* const* argv) {
  Flags flags;
  std::string socket;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::optional<std::string_view> inline_value;
    if (const size_t eq = arg.find('=');
        arg.starts_with("--") && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    const bool takes_value =
        arg == "--socket" || arg == "--log-level" || arg == "--idle-exit" ||
        arg == "--group" || arg == "--max-connections" ||
        arg == "--request-timeout" || arg == "--expect-ranks" ||
        arg == "--workers" || arg == "--max-tensor-bytes" ||
        arg == "--max-open-steps" || arg == "--max-open-bytes";
    if (!takes_value && inline_value) {
      return Status::Error("flag " + std::string(arg) + " takes no value");
    }
    std::string_view value;
    if (takes_value) {
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return Status::Error("flag " + std::string(arg) + " needs a value");
      }
    }
    if (arg == "--socket") {
      if (value.empty()) return Status::Error("--socket needs a path");
      socket = value;
    } else if (arg == "--foreground") {
      flags.foreground = true;
    } else if (arg == "--log-level") {
      auto level = ParseLevel(value);
      if (!level) {
        return Status::Error("bad --log-level '" + std::string(value) +
                             "': use trace, debug, info, warn or error");
      }
      flags.log_level = *level;
    } else if (arg == "--idle-exit") {
      auto seconds = Bounded(arg, value, 0, kMaxIdleExitSeconds,
                             "a whole number of seconds");
      if (!seconds.ok()) return seconds.status();
      flags.idle_exit = std::chrono::seconds(*seconds);
    } else if (arg == "--group") {
      if (value.empty()) return Status::Error("--group needs a group name");
      flags.group = value;
    } else if (arg == "--max-connections") {
      auto n = Bounded(arg, value, 1, 1 << 20, "a whole number");
      if (!n.ok()) return n.status();
      flags.max_connections = static_cast<int>(*n);
    } else if (arg == "--request-timeout") {
      auto seconds = Bounded(arg, value, 1, 3600, "a whole number of seconds");
      if (!seconds.ok()) return seconds.status();
      flags.request_timeout = std::chrono::seconds(*seconds);
    } else if (arg == "--expect-ranks") {
      auto n = Bounded(arg, value, 0, 4096, "a whole number");
      if (!n.ok()) return n.status();
      flags.expect_ranks = static_cast<int>(*n);
    } else if (arg == "--workers") {
      auto n = Bounded(arg, value, 0, kMaxWorkers, "", "0 (one per core)");
      if (!n.ok()) return n.status();
      flags.workers = static_cast<unsigned>(*n);
    } else if (arg == "--max-tensor-bytes") {
      auto n =
          Bounded(arg, value, kMinTensorBytes, kMaxTensorBytes, "a byte count");
      if (!n.ok()) return n.status();
      flags.max_tensor_bytes = static_cast<uint64_t>(*n);
    } else if (arg == "--max-open-steps") {
      auto n = Bounded(arg, value, 1, kMaxOpenSteps, "a whole number");
      if (!n.ok()) return n.status();
      flags.max_open_steps = static_cast<size_t>(*n);
    } else if (arg == "--max-open-bytes") {
      auto n =
          Bounded(arg, value, kMinOpenBytes, kMaxOpenBytes, "a byte count");
      if (!n.ok()) return n.status();
      flags.max_open_bytes = static_cast<uint64_t>(*n);
    } else if (arg == "--help" || arg == "-h") {
      flags.help = true;
    } else {
      return Status::Error("unknown flag '" + std::string(argv[i]) + "'");
    }
  }
  flags.socket = control::ResolveSocketPath(socket);
  // A background daemon moves to "/", so a relative path is anchored now.
  if (!flags.socket.starts_with('/')) {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) == nullptr) {
      return Status::Error("cannot resolve the relative socket path " +
                           flags.socket);
    }
    flags.socket = std::string(cwd) + "/" + flags.socket;
  }
  return flags;
}

std::string Usage() {
  std::string text =
      R"(Usage: tprobed [--socket PATH] [--foreground] [--log-level LEVEL]
               [--idle-exit SECONDS] [--group NAME] [--max-connections N]
               [--request-timeout SECONDS] [--expect-ranks N] [--workers N]
               [--max-tensor-bytes BYTES] [--max-open-steps N]
               [--max-open-bytes BYTES] [--help]

tprobed is tprobe's per-node dump daemon. Trainer processes register on its
control socket and get a shared-memory segment of rings, into which they push
hook events and tensor bytes. tprobed drains the rings, computes the tensor
statistics (and CRC-32 checksums or .npy files), builds the module hierarchy
and the call stacks, and writes msprobe-compatible dump trees:
  <dump_path>/step<N>/rank<R>/{dump,stack,construct}.json
plus tprobe.json, the loss accounting of that step.

Options:
  --socket PATH        the control socket to listen on. Default: $TPROBE_SOCKET,
                       else $XDG_RUNTIME_DIR/tprobe/tprobed.sock, else
                       /tmp/tprobe-<uid>/tprobed.sock (here: @DEFAULT@).
                       Its directory is created with mode 0700; an existing
                       one must belong to tprobed's user and be writable by
                       nobody else, or tprobed refuses to start.
  --foreground         stay attached and log to stderr. Without it tprobed
                       detaches into the background and logs to tprobed.log
                       beside the socket; the command returns once the socket
                       listens.
  --log-level LEVEL    trace, debug, info, warn or error (default: info).
  --idle-exit SECONDS  exit once no client has been connected for SECONDS,
                       counted from start-up and from when the last client
                       left. 0, the default, means never. The private daemon
                       a trainer starts for itself uses this.
  --group NAME         let members of group NAME use this daemon too (a
                       node's shared daemon). The socket becomes 0660 and
                       its directory 0750, both of group NAME. Without it
                       only tprobed's own user and root may connect; anyone
                       else is refused with a message and a log line.
  --max-connections N  serve at most N control connections at once (default
                       256, lowered to fit the open-file limit); the excess
                       is refused with a message.
  --request-timeout SECONDS
                       close a connection that has not registered and sends
                       nothing for SECONDS, or that stalls in the middle of a
                       request that long (default 30). Requests are at most
                       1 MiB.
  --expect-ranks N     refuse to start unless N ranks' rings (the default
                       tprobe.ring_count x ring_bytes each) fit in the memory
                       available to tprobed (MemAvailable, and its cgroup's
                       memory.max). Each registration is checked anyway; this
                       makes a too small memory limit fail at start-up.
  --workers N          drain worker threads (default 0: one per core). Each
                       rank has its own pipeline; a worker serves one rank
                       at a time, so a rank's records stay in order.
  --max-tensor-bytes BYTES
                       the largest tensor a client may declare (default
                       4294967296). A larger one is never buffered: it is
                       written with null statistics and the step is marked
                       incomplete.
  --max-open-steps N   steps of one rank held open at once (default 64, up
                       to 65536). A rank that runs ahead of its Step
                       requests is not read further until one closes: its
                       rings fill and its full-ring policy applies (block,
                       or drop and count), so the daemon's memory and open
                       files stay bounded however far a rank runs ahead.
  --max-open-bytes BYTES
                       the bytes one rank's open steps may hold (their
                       dump.json, construct and stack text; default
                       1073741824, at least 1048576). Past it no further
                       step is opened until one closes, as above; the
                       steps already open are still read, so one step
                       larger than this is written whole.
  --help               print this text and exit.

SIGTERM, SIGINT and a Shutdown request make tprobed drain every ring, write
every open step and exit 0. Exit status 1: it could not start (for example,
another tprobed already answers on the socket); 2: bad flags.
)";
  text.replace(text.find("@DEFAULT@"), 9, control::ResolveSocketPath(""));
  return text;
}

std::string LogFilePath(const std::string& socket_path) {
  return DirName(socket_path) + "/tprobed.log";
}

}  // namespace tprobe::daemon
