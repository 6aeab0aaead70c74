// libFuzzer target: what the daemon does with the bytes clients send on
// its control socket (daemon/control/control_server.h, control_service.h): read
// frames (common/control/frame.h: a 4-byte little-endian length, then a
// serialized tprobe.v1.Request), parse each Request and answer it with the
// real ControlService, with a real Registry; the producers a Register
// creates (real shared memory) run their queued commands after each
// request, as a drain worker would, and are finalised when the input ends,
// as at a hang-up. Each request must get exactly one reply.
//
// Two connections take turns, so that a rank and the CLI meet (tprobe
// configure, then the rank's FetchConfig): the input is turns
// [u8 connection (bit 0)][frame]. A frame longer than max_request_bytes
// closes its connection, as the control server does; a truncated turn ends
// the input, and every connection still open hangs up.
//
// A Register whose config's dump_path is absolute or holds ".." is left
// out: it would create directories anywhere on the machine. The others
// resolve inside the scratch directory, the process's working directory.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/config/config_proto.h"
#include "common/control/frame.h"
#include "daemon/control/connection_policy.h"
#include "daemon/control/control_service.h"
#include "daemon/ingest/rank_pipeline.h"
#include "daemon/ingest/registry.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"
#include "tprobe/v1/control.pb.h"

namespace {

namespace daemon = tprobe::daemon;
namespace v1 = tprobe::v1;

struct Turn {
  size_t connection;
  std::optional<std::span<const std::byte>> body;  // none: over the cap
};

// The turns of the input, each connection's frames read as the control
// server reads them.
std::vector<Turn> ReadTurns(tprobe::fuzz::Cursor& in,
                            uint32_t max_request_bytes) {
  std::vector<Turn> turns;
  while (in.left() >= 1 + tprobe::control::kFrameHeaderBytes) {
    const size_t connection = in.Take<uint8_t>() & 1;
    const auto header = in.Bytes(tprobe::control::kFrameHeaderBytes);
    const uint32_t size = tprobe::control::FrameBodySize(
        reinterpret_cast<const unsigned char*>(header.data()));
    if (size > max_request_bytes) {
      turns.push_back(Turn{connection, std::nullopt});
      continue;
    }
    if (size > in.left()) break;
    turns.push_back(Turn{connection, in.Bytes(size)});
  }
  return turns;
}

bool LeavesScratch(const v1::Request& request) {
  if (request.body_case() != v1::Request::kRegister) return false;
  auto parsed = tprobe::config::FromProto(request.register_().config());
  if (!parsed.ok()) return false;
  const std::string& path = parsed.value().dump_path;
  return path.starts_with('/') || path.find("..") != std::string::npos;
}

void RunQueued(daemon::Registry& registry, spdlog::logger& log) {
  for (const auto& p : registry.Snapshot()) {
    auto state = p->Lock();
    while (daemon::RunPipeline(*p, *state, registry, log, 0) != 0) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool in_scratch =
      ::chdir(tprobe::fuzz::ScratchDir().c_str()) == 0;
  tprobe::fuzz::Check(in_scratch, "chdir into the scratch directory");
  static auto log = std::make_shared<spdlog::logger>("fuzz");  // no sinks
  tprobe::fuzz::Cursor in(data, size);
  const auto turns =
      ReadTurns(in, daemon::ConnectionPolicy{}.max_request_bytes);

  daemon::Registry registry;
  daemon::ControlService service(registry, log);
  daemon::Connection conns[2];
  bool open[2] = {true, true};
  for (daemon::Connection& conn : conns) {
    conn.peer = daemon::PeerCredentials{::getuid(), ::getgid(), ::getpid()};
  }
  size_t requests = 0;
  auto replies = std::make_shared<size_t>(0);
  for (const Turn& turn : turns) {
    daemon::Connection& conn = conns[turn.connection];
    if (!open[turn.connection]) continue;
    if (!turn.body) {  // over the cap: the server closes the connection
      open[turn.connection] = false;
      service.HangUp(conn);
      RunQueued(registry, *log);
      continue;
    }
    v1::Request request;
    if (!request.ParseFromArray(turn.body->data(),
                                static_cast<int>(turn.body->size())) ||
        LeavesScratch(request)) {
      continue;
    }
    ++requests;
    service.Handle(conn, request, [replies](v1::Response) { ++*replies; });
    RunQueued(registry, *log);
    if (service.AfterReply(conn)) break;  // Shutdown
  }
  for (size_t i = 0; i < 2; ++i) {
    if (open[i]) service.HangUp(conns[i]);
  }
  RunQueued(registry, *log);
  for (const auto& p : registry.Snapshot()) {
    auto state = p->Lock();
    daemon::FinishPipeline(*p, *state, registry, *log);
  }
  tprobe::fuzz::Check(*replies == requests,
                      "every request gets exactly one reply");
  return 0;
}
