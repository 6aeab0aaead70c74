#include "client/session.h"

#include <unistd.h>

#include <cstdio>

#include "client/daemon_launcher.h"
#include "common/control/socket_path.h"
#include "common/shm/segment.h"

namespace tprobe::client {
namespace {

FullRingPolicy ToCorePolicy(config::FullRingPolicy p) {
  return p == config::FullRingPolicy::kDrop ? FullRingPolicy::kDrop
                                            : FullRingPolicy::kBlock;
}

}  // namespace

Result<std::unique_ptr<Session>> Session::Create(const SessionOptions& options) {
  config::Config cfg;
  if (!options.config_path.empty()) {
    auto loaded = config::LoadConfigFile(options.config_path);
    if (!loaded.ok()) return loaded.status();
    cfg = std::move(loaded).value();
  }
  if (!options.dump_path.empty()) cfg.dump_path = options.dump_path;
  const std::string socket = control::ResolveSocketPath(
      options.socket_path.empty() ? cfg.socket : options.socket_path);

  std::unique_ptr<Session> session(
      new Session(cfg, options.rank, options.connect_timeout_ms));
  v1::Register reg;
  reg.set_pid(::getpid());
  reg.set_start_time(shm::ProcessStartTime(::getpid()));
  reg.set_rank(options.rank);
  reg.set_config_json(config::ToJson(cfg));
  reg.set_ring_count(cfg.ring_count);
  reg.set_ring_bytes(cfg.ring_bytes);
  reg.set_framework(options.framework);
  std::function<bool(std::string*)> launch;
  if (options.autostart_daemon) {
    const std::string binary = FindDaemonBinary(options.daemon_path);
    launch = [binary, socket](std::string* error) {
      return LaunchDaemon(binary, socket, error);
    };
  }
  session->channel_ = std::make_unique<ControlChannel>(
      &session->core_, socket, std::move(reg), std::move(launch));
  session->channel_->Open(options.connect_timeout_ms);
  return session;
}

Session::Session(config::Config config, int rank, int connect_timeout_ms)
    : config_(std::move(config)),
      rank_(rank),
      connect_timeout_ms_(connect_timeout_ms),
      core_(ToCorePolicy(config_.policy), config_.block_timeout_ms) {}

Session::~Session() {
  v1::Request bye;
  bye.mutable_goodbye()->set_dropped_no_daemon(core_.dropped_no_daemon());
  v1::Response reply;
  channel_->Call(std::move(bye), connect_timeout_ms_ + 30000, &reply);
  channel_->Close();
}

void Session::UpdateCollecting() {
  const uint32_t step = step_.load(std::memory_order_relaxed);
  collecting_.store(running_ && !ended_ &&
                        config::StepSelected(config_, step) &&
                        config::RankSelected(config_, rank_),
                    std::memory_order_release);
}

void Session::Start() {
  std::lock_guard lock(mu_);
  const uint32_t step = step_.load(std::memory_order_relaxed);
  auto last = config::LastStep(config_);
  if (!ended_ && last && step > *last) {
    ended_ = true;
    std::fprintf(stderr,
                 "[tprobe] the configured steps are done (last step %lld); "
                 "tprobe ends successfully and training goes on.\n",
                 static_cast<long long>(*last));
  }
  running_ = true;
  UpdateCollecting();
  if (collecting()) {
    v1::Request req;
    req.mutable_start()->set_step(step);
    channel_->Send(std::move(req));
  }
}

void Session::Stop() {
  std::lock_guard lock(mu_);
  const bool was_collecting = collecting();
  running_ = false;
  UpdateCollecting();
  if (was_collecting) {
    v1::Request req;
    req.mutable_stop()->set_step(step_.load(std::memory_order_relaxed));
    channel_->Send(std::move(req));
  }
}

void Session::Step() {
  std::lock_guard lock(mu_);
  const uint32_t step = step_.load(std::memory_order_relaxed);
  if (!ended_ && config::StepSelected(config_, step) &&
      config::RankSelected(config_, rank_)) {
    v1::Request req;
    req.mutable_step()->set_step(step);
    channel_->Send(std::move(req));
  }
  indices_.clear();
  step_.store(step + 1, std::memory_order_release);
  UpdateCollecting();
}

uint32_t Session::NextIndex(const std::string& prefix) {
  std::lock_guard lock(mu_);
  return indices_[prefix]++;
}

bool Session::Flush(int timeout_ms) {
  v1::Request req;
  req.mutable_flush();
  v1::Response reply;
  return channel_->Call(std::move(req), timeout_ms, &reply);
}

}  // namespace tprobe::client
