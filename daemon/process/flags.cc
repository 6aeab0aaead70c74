// tprobed's command line (flags.h): every flag declared once, with CLI11,
// for parsing and for the --help text alike.

#include "daemon/process/flags.h"

#include <unistd.h>

#include <charconv>
#include <optional>
#include <string_view>
#include <vector>

#include "common/cli/command_line.h"
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

// A whole number in [min, max] from `value` of flag `name`; else an error
// "bad NAME 'VALUE': use WHAT from MIN to MAX", or "use LOW to MAX" when
// `low` describes the minimum.
Result<int64_t> Bounded(std::string_view name, std::string_view value,
                        int64_t min, int64_t max, std::string_view what,
                        std::string_view low = {}) {
  if (auto n = ParseNumber(value, min, max)) return *n;
  const std::string range =
      low.empty() ? std::string(what) + " from " + std::to_string(min)
                  : std::string(low);
  return Status::Error("bad " + std::string(name) + " '" + std::string(value) +
                       "': use " + range + " to " + std::to_string(max));
}

// Declares value flag `name` whose value is a whole number in [min, max]
// (Bounded's message otherwise), handed to `set`.
template <typename Set>
void AddNumber(CommandLine& line, const std::string& name,
               const std::string& value_name, const std::string& help,
               int64_t min, int64_t max, std::string what, std::string low,
               Set set) {
  line.AddValue(name, value_name, help,
                [=](const std::string& value) -> Status {
                  auto n = Bounded(name, value, min, max, what, low);
                  if (!n.ok()) return n.status();
                  set(*n);
                  return Status::Ok();
                });
}

constexpr char kUsage[] =
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
)";

constexpr char kFooter[] =
    R"(SIGTERM, SIGINT and a Shutdown request make tprobed drain every ring, write
every open step and exit 0. Exit status 1: it could not start (for example,
another tprobed already answers on the socket); 2: bad flags.
)";

// tprobed's command line, in two parts: every flag, its help, and what it
// sets in `flags`. First how tprobed runs (--socket: `socket`, resolved by
// ParseFlags) ...
void DeclareProcess(CommandLine& line, Flags& flags, std::string& socket) {
  line.AddValue("--socket", "PATH",
                "the control socket to listen on. Default: $TPROBE_SOCKET,\n"
                "else $XDG_RUNTIME_DIR/tprobe/tprobed.sock, else\n"
                "/tmp/tprobe-<uid>/tprobed.sock (here: " +
                    control::ResolveSocketPath("") +
                    ").\n"
                    "Its directory is created with mode 0700; an existing\n"
                    "one must belong to tprobed's user and be writable by\n"
                    "nobody else, or tprobed refuses to start.",
                [&socket](const std::string& value) {
                  if (value.empty()) {
                    return Status::Error("--socket needs a path");
                  }
                  socket = value;
                  return Status::Ok();
                });
  line.AddFlag("--foreground",
               "stay attached and log to stderr. Without it tprobed\n"
               "detaches into the background and logs to tprobed.log\n"
               "beside the socket; the command returns once the socket\n"
               "listens.",
               &flags.foreground);
  line.AddValue(
      "--log-level", "LEVEL",
      "trace, debug, info, warn or error (default: info).",
      [&flags](const std::string& value) {
        auto level = ParseLevel(value);
        if (!level) {
          return Status::Error("bad --log-level '" + value +
                               "': use trace, debug, info, warn or error");
        }
        flags.log_level = *level;
        return Status::Ok();
      });
  AddNumber(line, "--idle-exit", "SECONDS",
            "exit once no client has been connected for SECONDS,\n"
            "counted from start-up and from when the last client\n"
            "left. 0, the default, means never. The private daemon\n"
            "a trainer starts for itself uses this.",
            0, kMaxIdleExitSeconds, "a whole number of seconds", "",
            [&flags](int64_t n) { flags.idle_exit = std::chrono::seconds(n); });
  line.AddValue("--group", "NAME",
                "let members of group NAME use this daemon too (a\n"
                "node's shared daemon). The socket becomes 0660 and\n"
                "its directory 0750, both of group NAME. Without it\n"
                "only tprobed's own user and root may connect; anyone\n"
                "else is refused with a message and a log line.",
                [&flags](const std::string& value) {
                  if (value.empty()) {
                    return Status::Error("--group needs a group name");
                  }
                  flags.group = value;
                  return Status::Ok();
                });
}

// ... then what it serves and holds.
void DeclareLimits(CommandLine& line, Flags& flags) {
  AddNumber(line, "--max-connections", "N",
            "serve at most N control connections at once (default\n"
            "256, lowered to fit the open-file limit); the excess\n"
            "is refused with a message.",
            1, 1 << 20, "a whole number", "", [&flags](int64_t n) {
              flags.max_connections = static_cast<int>(n);
            });
  AddNumber(line, "--request-timeout", "SECONDS",
            "close a connection that has not registered and sends\n"
            "nothing for SECONDS, or that stalls in the middle of a\n"
            "request that long (default 30). Requests are at most\n"
            "1 MiB.",
            1, 3600, "a whole number of seconds", "", [&flags](int64_t n) {
              flags.request_timeout = std::chrono::seconds(n);
            });
  AddNumber(line, "--expect-ranks", "N",
            "refuse to start unless N ranks' rings (the default\n"
            "tprobe.ring_count x ring_bytes each) fit in the memory\n"
            "available to tprobed (MemAvailable, and its cgroup's\n"
            "memory.max). Each registration is checked anyway; this\n"
            "makes a too small memory limit fail at start-up.",
            0, 4096, "a whole number", "",
            [&flags](int64_t n) { flags.expect_ranks = static_cast<int>(n); });
  AddNumber(line, "--workers", "N",
            "drain worker threads (default 0: one per core). Each\n"
            "rank has its own pipeline; a worker serves one rank\n"
            "at a time, so a rank's records stay in order.",
            0, kMaxWorkers, "", "0 (one per core)",
            [&flags](int64_t n) { flags.workers = static_cast<unsigned>(n); });
  AddNumber(line, "--max-tensor-bytes", "BYTES",
            "the largest tensor a client may declare (default\n"
            "4294967296). A larger one is never buffered: it is\n"
            "written with null statistics and the step is marked\n"
            "incomplete.",
            kMinTensorBytes, kMaxTensorBytes, "a byte count", "",
            [&flags](int64_t n) {
              flags.max_tensor_bytes = static_cast<uint64_t>(n);
            });
  AddNumber(line, "--max-open-steps", "N",
            "steps of one rank held open at once (default 64, up\n"
            "to 65536). A rank that runs ahead of its Step\n"
            "requests is not read further until one closes: its\n"
            "rings fill and its full-ring policy applies (block,\n"
            "or drop and count), so the daemon's memory and open\n"
            "files stay bounded however far a rank runs ahead.",
            1, kMaxOpenSteps, "a whole number", "", [&flags](int64_t n) {
              flags.max_open_steps = static_cast<size_t>(n);
            });
  AddNumber(
      line, "--max-open-bytes", "BYTES",
      "the bytes one rank's open steps may hold (their\n"
      "dump.json, construct and stack text; default\n"
      "1073741824, at least 1048576). Past it no further\n"
      "step is opened until one closes, as above; the\n"
      "steps already open are still read, so one step\n"
      "larger than this is written whole.",
      kMinOpenBytes, kMaxOpenBytes, "a byte count", "",
      [&flags](int64_t n) { flags.max_open_bytes = static_cast<uint64_t>(n); });
}

}  // namespace

Result<Flags> ParseFlags(int argc, const char* const* argv) {
  Flags flags;
  std::string socket;
  CommandLine line(kUsage, kFooter);
  DeclareProcess(line, flags, socket);
  DeclareLimits(line, flags);
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  Result<bool> help = line.Parse(args);
  if (!help.ok()) return help.status();
  flags.help = *help;
  if (!line.operands().empty()) {
    return Status::Error("unexpected argument '" + line.operands().front() +
                         "'");
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
  Flags flags;
  std::string socket;
  CommandLine line(kUsage, kFooter);
  DeclareProcess(line, flags, socket);
  DeclareLimits(line, flags);
  return line.Help();
}

std::string LogFilePath(const std::string& socket_path) {
  return DirName(socket_path) + "/tprobed.log";
}

}  // namespace tprobe::daemon
