// `tprobe start|stop|configure|step|flush|shutdown`: one control request
// each, sent to tprobed as an unregistered connection, so that they apply to
// every registered rank the caller may reach (start and stop: the ones
// --ranks names, live; configure: every rank, live). On a daemon shared by
// several users (root, --group) a user reaches only its own ranks; root and
// the daemon's user reach all, and only they may shut it down.

#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "common/config/config_proto.h"
#include "common/dump/json_writer.h"
#include "common/shm/directive.h"
#include "tools/cli/args.h"
#include "tools/cli/command.h"
#include "tools/cli/control_client.h"

namespace tprobe::cli {
namespace {

constexpr char kFooter[] =
    R"(Exit status: 0 on success; 1 when tprobed cannot be reached, refuses the
connection, does not answer within --timeout, or answers with an error; 2
for bad input: a bad command line, or (configure) a config that is invalid
or changes a key that cannot change live; 3 when nothing happened (no rank
registered or matching, a step already passed).
)";

// The one positional argument a command takes, if any.
enum class Operand { kNone, kFile };

// The values of a command's own options (besides --socket, --timeout and
// --json), as given; Spec::fill checks them.
struct Given {
  std::optional<std::string> steps;  // --steps
  std::optional<std::string> ranks;  // --ranks
  bool wait = false;                 // --wait
};

struct Spec {
  std::string_view name;
  std::string_view summary;
  std::string_view usage;  // the text before the options
  Operand operand;
  bool needs_ranks;  // does nothing without a registered rank
  // Declares the command's own options on `line`, into `given`.
  void (*declare)(CommandLine& line, Given& given);
  // Fills the request from the operand (FILE as given) and the options; an
  // error is bad input (exit status 2).
  Status (*fill)(v1::Request& request, const std::string& file,
                 const Given& given);
};

void DeclareNothing(CommandLine&, Given&) {}

void DeclareRanks(CommandLine& line, Given& given) {
  line.AddValue("--ranks", "R,R,...",
                "only these ranks (default: every registered rank; on a\n"
                "shared daemon, every rank of yours)",
                &given.ranks);
}

// --steps N, A-B or A- (open-ended); absent: from step 0 on.
Status ParseSteps(const std::optional<std::string>& text, v1::Start& start) {
  start.set_first_step(0);
  start.set_last_step(shm::kOpenEnded);
  if (!text) return Status::Ok();
  const std::string bad = "bad --steps '" + *text +
                          "': use N, A-B or A- (from A on), steps from 0 to " +
                          std::to_string(shm::kMaxDirectiveStep);
  const size_t dash = text->find('-');
  auto first =
      ParseCount(text->substr(0, dash), "--steps", shm::kMaxDirectiveStep);
  if (!first.ok()) return Status::Error(bad);
  start.set_first_step(static_cast<uint32_t>(*first));
  if (dash == std::string::npos) {
    start.set_last_step(static_cast<uint32_t>(*first));
    return Status::Ok();
  }
  if (dash + 1 == text->size()) return Status::Ok();
  auto last =
      ParseCount(text->substr(dash + 1), "--steps", shm::kMaxDirectiveStep);
  if (!last.ok() || *last < *first) return Status::Error(bad);
  start.set_last_step(static_cast<uint32_t>(*last));
  return Status::Ok();
}

// --ranks R,R,...; absent: every rank.
Status ParseRanks(const std::optional<std::string>& text,
                  google::protobuf::RepeatedField<int32_t>* ranks) {
  if (!text) return Status::Ok();
  size_t begin = 0;
  for (;;) {
    const size_t comma = text->find(',', begin);
    auto rank = ParseCount(text->substr(begin, comma - begin), "--ranks",
                           std::numeric_limits<int32_t>::max());
    if (!rank.ok()) {
      return Status::Error("bad --ranks '" + *text +
                           "': use rank numbers separated by commas, as 0,1");
    }
    ranks->Add(static_cast<int32_t>(*rank));
    if (comma == std::string::npos) return Status::Ok();
    begin = comma + 1;
  }
}

int Run(const Spec& spec, std::span<const std::string_view> args) {
  const std::string name(spec.name);
  CommandLine line(std::string(spec.usage), kFooter);
  Given given;
  spec.declare(line, given);
  DaemonOptions daemon;
  AddDaemonOptions(line, daemon,
                   "how long to wait for tprobed, the connection and its\n"
                   "answer together (default 60)");
  bool json = false;
  line.AddFlag("--json",
               "print the outcome as one JSON object:\n"
               "{\"command\", \"ok\", \"ranks\", \"error\"}",
               &json);
  if (auto exit = ParseCommandLine(name, line, args)) return *exit;
  const std::vector<std::string>& positionals = line.operands();
  const size_t operands = spec.operand == Operand::kNone ? 0 : 1;
  std::string file;
  if (spec.operand == Operand::kFile) {
    if (positionals.empty()) return UsageError(name, "FILE is missing");
    file = positionals[0];
  }
  if (positionals.size() > operands) {
    return UsageError(name,
                      "unexpected argument '" + positionals[operands] + "'");
  }
  const std::string socket = CliSocketPath(daemon.socket);
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
  // Bad input is refused before tprobed is asked anything.
  v1::Request request;
  if (Status s = spec.fill(request, file, given); !s.ok()) {
    if (json) report(false, 0, s.message());
    return UsageError(name, s.message());
  }
  // Which ranks the command reaches: none means nothing would happen.
  v1::Request status;
  status.mutable_status();
  auto ranks = CallDaemon(spec.name, socket, status, daemon.timeout);
  if (!ranks.ok()) return kExitFailure;
  const int count = ranks->status().ranks_size();
  if (count == 0 && spec.needs_ranks) {
    report(false, 0,
           "no rank is registered with tprobed on " + socket + ": nothing to " +
               name +
               " (start the training first, or check its TPROBE_SOCKET)");
    return kExitNothing;
  }
  auto done = CallDaemon(spec.name, socket, request, daemon.timeout);
  if (!done.ok()) {
    if (json) report(false, count, done.status().message());
    return ExitStatusOf(done.status());
  }
  report(true, count, "");
  return kExitOk;
}

constexpr Spec kStart{
    "start",
    "make running ranks capture steps, live",
    R"(Usage: tprobe start [--steps N|A-B|A-] [--ranks R,R,...] [--socket PATH]
                   [--timeout SECONDS] [--json]

Makes the running ranks capture the steps given (default: every step from
now on), whatever their config's step and rank lists say. Each rank reads
the order when its next step starts, so it takes effect within one step;
nothing is sent into the trainer. --ranks limits it to those ranks (default:
every registered rank; on a shared daemon, every rank of yours: see
'tprobe status'). Exit status 3 when no rank is registered, none
matches --ranks, or every matching rank is already past the last step.
)",
    Operand::kNone,
    true,
    [](CommandLine& line, Given& given) {
      line.AddValue("--steps", "N|A-B|A-",
                    "capture step N, steps A to B, or every step from A\n"
                    "on (default: every step from now on)",
                    &given.steps);
      DeclareRanks(line, given);
    },
    [](v1::Request& r, const std::string&, const Given& given) -> Status {
      v1::Start* start = r.mutable_start();
      start->set_live(true);
      if (Status s = ParseSteps(given.steps, *start); !s.ok()) return s;
      return ParseRanks(given.ranks, start->mutable_ranks());
    }};

constexpr Spec kStop{
    "stop",
    "make running ranks stop capturing, live",
    R"(Usage: tprobe stop [--ranks R,R,...] [--wait] [--socket PATH]
                  [--timeout SECONDS] [--json]

Makes the running ranks stop capturing (every registered rank, or those
--ranks lists; on a shared daemon, only ranks of yours) from their next step
boundary on, whatever their config says; what they captured so far is
written. It answers as soon as every rank has the order, whatever backlog
the daemon still has to write; with --wait it answers once the captured
steps are on disk (a write error is then reported, exit status 1).
'tprobe start' resumes. Exit status 3 when no rank is registered or none
matches --ranks.
)",
    Operand::kNone,
    true,
    [](CommandLine& line, Given& given) {
      DeclareRanks(line, given);
      line.AddFlag("--wait", "answer once the captured steps are on disk",
                   &given.wait);
    },
    [](v1::Request& r, const std::string&, const Given& given) -> Status {
      v1::Stop* stop = r.mutable_stop();
      stop->set_live(true);
      stop->set_wait(given.wait);
      return ParseRanks(given.ranks, stop->mutable_ranks());
    }};

constexpr Spec kConfigure{
    "configure",
    "give running ranks a new config.json, live",
    R"(Usage: tprobe configure FILE [--socket PATH] [--timeout SECONDS] [--json]

Checks FILE (an msprobe config.json, as PrecisionDebugger reads it) and
gives it to every registered rank (on a shared daemon, every rank of yours),
which records from its next step on under
it: the step that starts after the one running now. It replaces a live
'tprobe start' or 'tprobe stop'.

A live config may change task, level, step, rank, scope, list, data_mode,
summary_mode, overflow_nums and dump_path (the steps from the one that takes
the config up go under the new path, which tprobed creates as each rank's
user, relative to the rank's working directory when relative). It may not
change the "tprobe" section (socket, ring_bytes, ring_count, policy,
block_timeout_ms, exit_timeout_ms): it was fixed when each rank registered,
so keep the values the training started with. A FILE that is not a valid
config, that changes one of those keys, or whose dump_path cannot be used is
refused naming the key or the path, and no rank changes (exit status 2). Exit status 3 when no rank is registered. A key that msprobe
reads and tprobe does not act on is accepted with one warning line on
stderr (docs/msprobe-api.md lists every key).
)",
    Operand::kFile,
    true,
    DeclareNothing,
    [](v1::Request& r, const std::string& file, const Given&) -> Status {
      std::vector<std::string> warnings;
      auto config = config::LoadConfigFile(file, &warnings);
      if (!config.ok()) return config.status();
      for (const std::string& warning : warnings) {
        std::fprintf(stderr, "tprobe configure: %s\n", warning.c_str());
      }
      *r.mutable_configure()->mutable_config() = config::ToProto(*config);
      return Status::Ok();
    }};

constexpr Spec kFlush{
    "flush",
    "drain every rank and write its open steps now",
    R"(Usage: tprobe flush [--socket PATH] [--timeout SECONDS] [--json]

Drains what every registered rank (on a shared daemon, every rank of yours)
has committed and writes every open step. Returns once the files are on
disk.
)",
    Operand::kNone,
    true,
    DeclareNothing,
    [](v1::Request& r, const std::string&, const Given&) -> Status {
      r.mutable_flush();
      return Status::Ok();
    }};

constexpr Spec kShutdown{
    "shutdown",
    "make tprobed write everything and exit",
    R"(Usage: tprobe shutdown [--socket PATH] [--timeout SECONDS] [--json]

Asks tprobed to exit. It answers first, then drains every rank, writes every
open step, removes the shared-memory segments and exits 0. Ranks still
running carry on without it (their records count as dropped_no_daemon).
Only root and the daemon's own user may shut it down: a daemon shared by
several users refuses the others (exit status 1).
)",
    Operand::kNone,
    false,
    DeclareNothing,
    [](v1::Request& r, const std::string&, const Given&) -> Status {
      r.mutable_shutdown();
      return Status::Ok();
    }};

int RunStart(std::span<const std::string_view> a) { return Run(kStart, a); }
int RunStop(std::span<const std::string_view> a) { return Run(kStop, a); }
int RunConfigure(std::span<const std::string_view> a) {
  return Run(kConfigure, a);
}
int RunFlush(std::span<const std::string_view> a) { return Run(kFlush, a); }
int RunShutdown(std::span<const std::string_view> a) {
  return Run(kShutdown, a);
}

const Command kCommands[] = {
    {kStart.name, kStart.summary, RunStart},
    {kStop.name, kStop.summary, RunStop},
    {kConfigure.name, kConfigure.summary, RunConfigure},
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
