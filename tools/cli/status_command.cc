// `tprobe status`: tprobed's pid and one line per registered rank.

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "common/dump/json_writer.h"
#include "common/record_losses.h"
#include "tools/cli/args.h"
#include "tools/cli/command.h"
#include "tools/cli/control_client.h"

namespace tprobe::cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: tprobe status [--json] [--socket PATH] [--timeout SECONDS]

Prints tprobed's pid, then one line per registered rank (trainer process);
on a daemon shared by several users, only your own ranks (root and the
daemon's user see every rank):
  RANK        the distributed rank ("-" for none)
  PID         the rank's process id
  STATE       "running", or "exited" once the process is gone (what it
              committed is still being written)
  STEP        the step being captured
  RING_FILL   bytes committed to its rings and not yet drained
  BEHIND      records committed to its rings that tprobed has not read
  OPEN        steps tprobed holds open: read in part, not yet written
  RECORDS     records it has written, and their BYTES
  RING_FULL   records dropped because a ring was full
  TOO_LARGE   records dropped because they could never fit a ring
  NO_DAEMON   records dropped while no daemon listened
  OUTAGE      the last daemon outage the rank reported: the steps whose
              records no daemon received ("first-last"; "-" for none)
  LAST_ERROR  the last problem tprobed saw with it ("-" for none)

With --json, prints one JSON object instead:
  {"daemon_pid": N, "socket": PATH, "ranks": [{"rank": R or null, "pid",
   "client_id", "state", "step", "ring_fill_bytes", "records_behind",
   "steps_open", "records", "bytes",
   "dropped": {"ring_full", "too_large", "no_daemon"},
   "outage": {"first_step", "last_step", "records_lost"} or null,
   "last_error": TEXT or null}, ...]}
)";

constexpr char kFooter[] =
    R"(Exit status: 0 on success, 1 when tprobed cannot be reached, refuses the
connection or does not answer within --timeout, 2 for a bad command line.
)";

using Row = std::array<std::string, 14>;

const char* State(const v1::RankStatus& r) {
  return r.process_gone() ? "exited" : "running";
}

Row RankRow(const v1::RankStatus& r) {
  return {r.rank() < 0 ? std::string("-") : std::to_string(r.rank()),
          std::to_string(r.pid()),
          State(r),
          std::to_string(r.step()),
          std::to_string(r.ring_fill_bytes()),
          std::to_string(r.records_behind()),
          std::to_string(r.steps_open()),
          std::to_string(r.records()),
          std::to_string(r.bytes()),
          std::to_string(r.dropped_ring_full()),
          std::to_string(r.dropped_too_large()),
          std::to_string(r.dropped_no_daemon()),
          r.had_outage() ? std::to_string(r.outage_first_step()) + "-" +
                               std::to_string(r.outage_last_step())
                         : std::string("-"),
          r.last_error().empty() ? std::string("-") : r.last_error()};
}

dump::Json StatusJson(const v1::StatusReply& status,
                      const std::string& socket) {
  dump::Json ranks = dump::Json::array();
  for (const v1::RankStatus& r : status.ranks()) {
    dump::Json rank;
    rank["rank"] = r.rank() < 0 ? dump::Json() : dump::Json(r.rank());
    rank["pid"] = r.pid();
    rank["client_id"] = r.client_id();
    rank["state"] = State(r);
    rank["step"] = r.step();
    rank["ring_fill_bytes"] = r.ring_fill_bytes();
    rank["records_behind"] = r.records_behind();
    rank["steps_open"] = r.steps_open();
    rank["records"] = r.records();
    rank["bytes"] = r.bytes();
    rank["dropped"] = dump::Json::object();
#define TPROBE_KEY_(name) rank["dropped"][#name] = r.dropped_##name();
    TPROBE_RANK_LOSSES(TPROBE_KEY_)
#undef TPROBE_KEY_
    rank["outage"] = r.had_outage()
                         ? dump::Json{{"first_step", r.outage_first_step()},
                                      {"last_step", r.outage_last_step()},
                                      {"records_lost", r.outage_records_lost()}}
                         : dump::Json();
    rank["last_error"] =
        r.last_error().empty() ? dump::Json() : dump::Json(r.last_error());
    ranks.push_back(std::move(rank));
  }
  dump::Json doc;
  doc["daemon_pid"] = status.daemon_pid();
  doc["socket"] = socket;
  doc["ranks"] = std::move(ranks);
  return doc;
}

int RunStatus(std::span<const std::string_view> args) {
  CommandLine line(kUsage, kFooter);
  bool json = false;
  line.AddFlag("--json", "print JSON (above) instead of the table", &json);
  DaemonOptions daemon;
  AddDaemonOptions(line, daemon, "how long to wait for tprobed (default 60)");
  if (auto exit = ParseCommandLine("status", line, args)) return *exit;
  if (!line.operands().empty()) {
    return UsageError("status",
                      "unexpected argument '" + line.operands()[0] + "'");
  }
  const std::string socket = CliSocketPath(daemon.socket);
  v1::Request request;
  request.mutable_status();
  const auto response = CallDaemon("status", socket, request, daemon.timeout);
  if (!response.ok()) return kExitFailure;
  const v1::StatusReply& status = response->status();
  if (json) {
    std::printf("%s\n", StatusJson(status, socket).dump(1).c_str());
    return kExitOk;
  }
  std::printf("tprobed pid %d on %s: %d rank%s\n", status.daemon_pid(),
              socket.c_str(), status.ranks_size(),
              status.ranks_size() == 1 ? "" : "s");
  if (status.ranks_size() == 0) return kExitOk;

  std::vector<Row> rows = {{"RANK", "PID", "STATE", "STEP", "RING_FILL",
                            "BEHIND", "OPEN", "RECORDS", "BYTES", "RING_FULL",
                            "TOO_LARGE", "NO_DAEMON", "OUTAGE", "LAST_ERROR"}};
  for (const v1::RankStatus& rank : status.ranks()) {
    rows.push_back(RankRow(rank));
  }
  std::array<size_t, std::tuple_size_v<Row>> width{};
  for (const Row& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  for (const Row& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
  return kExitOk;
}

const Command kStatusCommand{
    "status",
    "show tprobed's ranks: state, step, backlog, records, drops, last error",
    RunStatus,
};
const CommandRegistration kRegistration(kStatusCommand);

}  // namespace
}  // namespace tprobe::cli
