// libFuzzer target: what the daemon does with the bytes a client sends on
// its control socket (daemon/control_server.h, control_service.h): split
// them into frames (a 4-byte little-endian length, then a serialized
// tprobe.v1.Request), parse each Request and answer it with the real
// ControlService, with a real Registry; the producers a Register creates
// (real shared memory) run their queued commands after each request, as a
// drain worker would, and are finalised when the input ends, as at a
// hang-up. Each request must get exactly one reply.
//
// A Register whose config's dump_path is absolute or holds ".." is left
// out: it would create directories anywhere on the machine. The others
// resolve inside the scratch directory, the process's working directory.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "daemon/connection_policy.h"
#include "daemon/control_service.h"
#include "daemon/rank_pipeline.h"
#include "daemon/registry.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"
#include "tprobe/v1/control.pb.h"

namespace {

namespace daemon = tprobe::daemon;
namespace v1 = tprobe::v1;

// The frames of a connection's byte stream, as the control server reads
// them: it stops at a frame longer than max_request_bytes (and closes the
// connection) or at a truncated one (a hang-up). (Retarget here when the
// frame codec moves to common/control.)
std::vector<std::span<const std::byte>> SplitFrames(
    tprobe::fuzz::Cursor& in, uint32_t max_request_bytes) {
  std::vector<std::span<const std::byte>> frames;
  while (in.left() >= 4) {
    const auto size = in.Take<uint32_t>();
    if (size > max_request_bytes || size > in.left()) break;
    frames.push_back(in.Bytes(size));
  }
  return frames;
}

bool LeavesScratch(const v1::Request& request) {
  if (request.body_case() != v1::Request::kRegister) return false;
  auto parsed = tprobe::config::ParseConfig(request.register_().config_json());
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
  const auto frames =
      SplitFrames(in, daemon::ConnectionPolicy{}.max_request_bytes);

  daemon::Registry registry;
  daemon::ControlService service(registry, log);
  daemon::Connection conn;
  conn.peer = daemon::PeerCredentials{::getuid(), ::getgid(), ::getpid()};
  size_t requests = 0;
  auto replies = std::make_shared<size_t>(0);
  for (const auto frame : frames) {
    v1::Request request;
    if (!request.ParseFromArray(frame.data(), static_cast<int>(frame.size())) ||
        LeavesScratch(request)) {
      continue;
    }
    ++requests;
    service.Handle(conn, request, [replies](v1::Response) { ++*replies; });
    RunQueued(registry, *log);
    if (service.AfterReply(conn)) break;  // Shutdown
  }
  service.HangUp(conn);
  RunQueued(registry, *log);
  for (const auto& p : registry.Snapshot()) {
    auto state = p->Lock();
    daemon::FinishPipeline(*p, *state, registry, *log);
  }
  tprobe::fuzz::Check(*replies == requests,
                      "every request gets exactly one reply");
  return 0;
}
