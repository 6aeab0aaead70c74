// `tprobe start|stop|step|flush|shutdown`: one control request each, sent to
// tprobed as an unregistered connection, so that Start, Stop, Step and Flush
// apply to every registered rank.

#include <cstdio>
#include <limits>
#include <string>

#include "common/dump/json_writer.h"
#include "daemon/cli/args.h"
#include "daemon/cli/command.h"
#include "daemon/cli/control_client.h"

namespace tprobe::cli {
namespace {

constexpr char kSocketHelp[] =
    R"(  --socket PATH  tprobed's control socket (default: $TPROBE_SOCKET, else
                 $XDG_RUNTIME_DIR/tprobe/tprobed.sock, else
                 /tmp/tprobe-<uid>/tprobed.sock)
  --timeout SECONDS
                 how long to wait for tprobed, the connection and its answer
                 together (default 60)
  --json         print the outcome as one JSON object:
                 {"command", "ok", "ranks", "error"}
  -h, --help     show this help

Exit status: 0 on success; 1 when tprobed cannot be reached, refuses the
connection, does not answer within --timeout, or answers with an error; 2
for a bad command line; 3 when nothing happened because no rank is
registered (start, stop, step, flush).
)";

struct Spec {
  std::string_view name;
  std::string_view summary;
  std::string_view usage;  // the text before the options
  bool takes_step;
  bool needs_ranks;  // does nothing without a registered rank
  void (*fill)(v1::Request& request, uint32_t step);
};

int Run(const Spec& spec, std::span<const std::string_view> args) {
  static constexpr OptionSpec kOptions[] = {
      {"socket", true}, {"timeout", true}, {"json", false}};
  const std::string name(spec.name);
  auto usage_error = [&name](const std::string& message) {
    std::fprintf(stderr, "tprobe %s: %s\nRun 'tprobe %s --help' for usage.\n",
                 name.c_str(), message.c_str(), name.c_str());
    return kExitUsage;
  };
  Result<ParsedArgs> parsed = ParseArgs(args, kOptions);
  if (!parsed.ok()) return usage_error(parsed.status().message());
  if (parsed->Has("help")) {
    std::fwrite(spec.usage.data(), 1, spec.usage.size(), stdout);
    std::fputs("\nOptions:\n", stdout);
    std::fputs(kSocketHelp, stdout);
    return kExitOk;
  }
  const std::vector<std::string>& positionals = parsed->positionals;
  uint32_t step = 0;
  if (spec.takes_step) {
    if (positionals.empty()) return usage_error("STEP is missing");
    Result<int64_t> s = ParseCount(positionals[0], "STEP",
                                   std::numeric_limits<uint32_t>::max());
    if (!s.ok()) return usage_error(s.status().message());
    step = static_cast<uint32_t>(*s);
  }
  if (positionals.size() > (spec.takes_step ? 1u : 0u)) {
    return usage_error("unexpected argument '" +
                       positionals[spec.takes_step ? 1 : 0] + "'");
  }
  auto timeout = CliTimeout(parsed->Get("timeout"));
  if (!timeout.ok()) return usage_error(timeout.status().message());
  const std::string socket = CliSocketPath(parsed->Get("socket").value_or(""));
  const bool json = parsed->Has("json");
  auto report = [&](bool ok, int ranks, const std::string& error) {
    if (json) {
      dump::Json doc;
      doc["command"] = name;
      doc["ok"] = ok;
      doc["ranks"] = ranks;
      doc["error"] = error.empty() ? dump::Json() : dump::Json(error);
      std::printf("%s\n", doc.dump().c_str());
    } else if (ok) {
      std::printf("tprobe %s: done (%d rank%s)\n", name.c_str(), ranks,
                  ranks == 1 ? "" : "s");
    } else {
      std::fprintf(stderr, "tprobe %s: %s\n", name.c_str(), error.c_str());
    }
  };
  // Which ranks the command reaches: none means nothing would happen.
  v1::Request status;
  status.mutable_status();
  auto ranks = CallDaemon(spec.name, socket, status, *timeout);
  if (!ranks) return kExitFailure;
  const int count = ranks->status().ranks_size();
  if (count == 0 && spec.needs_ranks) {
    report(false, 0,
           "no rank is registered with tprobed on " + socket +
               ": nothing to " + name +
               " (start the training first, or check its TPROBE_SOCKET)");
    return kExitNothing;
  }
  v1::Request request;
  spec.fill(request, step);
  if (!CallDaemon(spec.name, socket, request, *timeout)) return kExitFailure;
  report(true, count, "");
  return kExitOk;
}

constexpr Spec kStart{
    "start", "tell tprobed that every rank starts collecting a step",
    R"(Usage: tprobe start STEP [--socket PATH] [--timeout SECONDS]

Tells tprobed that every registered rank begins collecting step STEP: each
rank's tree of that step is opened, and ring drops are charged to it. What
the ranks capture, and when, they still decide themselves.
)",
    true, true,
    [](v1::Request& r, uint32_t step) { r.mutable_start()->set_step(step); }};

constexpr Spec kStop{"stop", "drain every rank and write its open steps",
                     R"(Usage: tprobe stop [--socket PATH] [--timeout SECONDS]

Drains what every registered rank has committed and writes its open steps.
The steps stay open: entries that still arrive (API backward after stop())
are written at the next flush.
)",
                     false, true,
                     [](v1::Request& r, uint32_t) { r.mutable_stop(); }};

constexpr Spec kStep{
    "step", "drain every rank and write and close its steps up to STEP",
    R"(Usage: tprobe step STEP [--socket PATH] [--timeout SECONDS]

Drains what every registered rank has committed, writes its steps up to and
including STEP and closes them, as a rank's own step() does. Data arriving
later for a closed step is skipped and counted (tprobe.json).
)",
    true, true,
    [](v1::Request& r, uint32_t step) { r.mutable_step()->set_step(step); }};

constexpr Spec kFlush{"flush", "drain every rank and write its open steps now",
                      R"(Usage: tprobe flush [--socket PATH] [--timeout SECONDS]

Drains what every registered rank has committed and writes every open step.
Returns once the files are on disk.
)",
                      false, true,
                      [](v1::Request& r, uint32_t) { r.mutable_flush(); }};

constexpr Spec kShutdown{
    "shutdown", "make tprobed write everything and exit",
    R"(Usage: tprobe shutdown [--socket PATH] [--timeout SECONDS]

Asks tprobed to exit. It answers first, then drains every rank, writes every
open step, removes the shared-memory segments and exits 0. Ranks still
running carry on without it (their records count as dropped_no_daemon).
)",
    false, false, [](v1::Request& r, uint32_t) { r.mutable_shutdown(); }};

int RunStart(std::span<const std::string_view> a) { return Run(kStart, a); }
int RunStop(std::span<const std::string_view> a) { return Run(kStop, a); }
int RunStep(std::span<const std::string_view> a) { return Run(kStep, a); }
int RunFlush(std::span<const std::string_view> a) { return Run(kFlush, a); }
int RunShutdown(std::span<const std::string_view> a) {
  return Run(kShutdown, a);
}

const Command kCommands[] = {
    {kStart.name, kStart.summary, RunStart},
    {kStop.name, kStop.summary, RunStop},
    {kStep.name, kStep.summary, RunStep},
    {kFlush.name, kFlush.summary, RunFlush},
    {kShutdown.name, kShutdown.summary, RunShutdown},
};
const CommandRegistration kRegistrations[] = {
    CommandRegistration(kCommands[0]), CommandRegistration(kCommands[1]),
    CommandRegistration(kCommands[2]), CommandRegistration(kCommands[3]),
    CommandRegistration(kCommands[4]),
};

}  // namespace
}  // namespace tprobe::cli
