#include "client/session.h"

#include <unistd.h>

#include <cstdio>

#include "client/daemon_launcher.h"
#include "common/control/socket_path.h"
#include "common/shm/directive.h"
#include "common/shm/segment.h"

namespace tprobe::client {
namespace {

// The outermost API call open on this thread, if any.
struct OpenApi {
  const Session* session = nullptr;
  uint64_t generation = 0;
};
thread_local OpenApi t_open_api;

}  // namespace

Result<std::unique_ptr<Session>> Session::Create(
    const SessionOptions& options) {
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
  std::string refusal;
  if (!session->channel_->Open(options.connect_timeout_ms, &refusal) &&
      !refusal.empty()) {
    return Status::Error(refusal);
  }
  return session;
}

Session::Session(config::Config config, int rank, int connect_timeout_ms)
    : config_(std::move(config)),
      rank_(rank),
      connect_timeout_ms_(connect_timeout_ms),
      keeps_backward_(
          config::DataModeSelected(config_.data_mode, false, true) ||
          config::DataModeSelected(config_.data_mode, false, false)),
      selection_everything_(config_.scope.empty() && config_.list.empty()),
      core_(config_.policy, config_.block_timeout_ms),
      selection_(config_) {}

Session::~Session() {
  v1::Request bye;
  bye.mutable_goodbye()->set_dropped_no_daemon(core_.dropped_no_daemon());
  v1::Response reply;
  // Waits at most exit_timeout_ms for the daemon to confirm the final
  // drain; what is still in the rings after that is the daemon's to finish.
  channel_->Call(std::move(bye), static_cast<int>(config_.exit_timeout_ms),
                 &reply);
  channel_->Close();
}

bool Session::Selected(uint32_t step) const {
  const shm::Directive live = shm::DecodeDirective(core_.directive());
  switch (live.mode) {
    case shm::CaptureMode::kCapture:
      return live.Covers(step);
    case shm::CaptureMode::kPause:
      return false;
    case shm::CaptureMode::kConfig:
      break;
  }
  return !ended_ && selection_.StepSelected(step) &&
         selection_.RankSelected(rank_);
}

void Session::UpdateCollecting() {
  const uint32_t step = step_.load(std::memory_order_relaxed);
  const bool selected = Selected(step);
  step_active_.store(started_ && selected, std::memory_order_release);
  collecting_.store(running_ && selected, std::memory_order_release);
}

bool Session::DaemonEndedDump() {
  // The daemon answers a Step at once and drains it later: a Flush waits
  // until this rank's records so far are read, so the status is current.
  v1::Request flush;
  flush.mutable_flush();
  v1::Response flushed;
  if (!channel_->Call(std::move(flush), connect_timeout_ms_, &flushed)) {
    return false;
  }
  v1::Request req;
  req.mutable_status();
  v1::Response reply;
  if (!channel_->Call(std::move(req), connect_timeout_ms_, &reply)) {
    return false;
  }
  for (const v1::RankStatus& rank : reply.status().ranks()) {
    if (rank.pid() == ::getpid() && rank.dump_ended()) return true;
  }
  return false;
}

void Session::Start() {
  // Task overflow_check: the daemon ends the dump once overflow_nums
  // overflows were written (it sees the statistics; the trainer does not).
  // DaemonEndedDump waits until it has read the previous step.
  bool ask = false;
  if (config_.task == config::Task::kOverflowCheck && core_.attached()) {
    std::lock_guard lock(mu_);
    ask = !ended_ && step_.load(std::memory_order_relaxed) > 0;
  }
  const bool overflow_ended = ask && DaemonEndedDump();
  std::lock_guard lock(mu_);
  const uint32_t step = step_.load(std::memory_order_relaxed);
  if (overflow_ended && !ended_) {
    ended_ = true;
    std::fprintf(stderr,
                 "[tprobe] overflow_nums (%lld) overflows were dumped; tprobe "
                 "ends successfully and training goes on.\n",
                 static_cast<long long>(config_.overflow_nums));
  }
  auto last = config::LastStep(config_);
  if (!ended_ && last && step > *last) {
    ended_ = true;
    std::fprintf(stderr,
                 "[tprobe] the configured steps are done (last step %lld); "
                 "tprobe ends successfully and training goes on.\n",
                 static_cast<long long>(*last));
  }
  running_ = true;
  started_ = true;
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

void Session::Step(uint64_t unclosed_calls) {
  std::lock_guard lock(mu_);
  const uint32_t step = step_.load(std::memory_order_relaxed);
  // A step collected in part (a live stop came mid-step) still ends.
  if (step_active_.load(std::memory_order_relaxed) || Selected(step)) {
    v1::Request req;
    req.mutable_step()->set_step(step);
    req.mutable_step()->set_unclosed_calls(unclosed_calls);
    channel_->Send(std::move(req));
  }
  indices_.Reset();
  selection_.ResetStep();
  generation_.fetch_add(1, std::memory_order_release);
  step_.store(step + 1, std::memory_order_release);
  core_.PublishStep(step + 1);
  started_ = running_;
  UpdateCollecting();
}

void Session::SetStep(uint32_t step) {
  std::lock_guard lock(mu_);
  step_.store(step, std::memory_order_release);
  UpdateCollecting();
}

void Session::Publish(CallPlan* plan) {
  // With scope or list, a module call is checked again when it ends: a
  // forward call's outputs and parameters, a backward call's everything.
  // Until then they may pass (a range opened by a child can take them in);
  // an API call has no children, so only what passed when it began can.
  const bool at_end =
      !selection_everything_ && plan->kind == record::CallKind::kModule;
  plan->input = selection_.Keeps(plan->forward, true) &&
                (plan->dumped || (at_end && !plan->forward));
  plan->output =
      selection_.Keeps(plan->forward, false) && (plan->dumped || at_end);
  if (plan->construct || plan->input || plan->output || plan->dumped) {
    plan->name_id = core_.Intern(record::InternKind::kName, plan->name);
  }
  if (plan->construct) {
    const auto direction = plan->forward ? record::Direction::kForward
                                         : record::Direction::kBackward;
    plan->construct =
        plan->name_id != 0 &&
        core_.WriteCall(true, plan->step, plan->name_id, plan->kind, direction);
  }
}

bool Session::InApi() const {
  return t_open_api.session == this &&
         t_open_api.generation == generation_.load(std::memory_order_acquire);
}

bool Session::BeginModule(std::string_view base, bool forward,
                          uint32_t forward_index, CallPlan* plan) {
  if (config_.level == config::Level::kL1 || !collecting() || InApi()) {
    return false;
  }
  plan->kind = record::CallKind::kModule;
  plan->forward = forward;
  plan->step = step();
  plan->construct = true;  // L0 and mix keep every module node
  plan->name_id = 0;
  {
    std::lock_guard lock(mu_);
    plan->index = forward ? indices_.NextModule(base) : forward_index;
    plan->name = ModuleCallName(base, forward, plan->index);
    if (selection_everything_) {
      plan->dumped = true;
    } else {
      selection_.BeginModule(plan->name);
      // A backward module call is checked only when it ends (CheckEnd).
      plan->dumped = forward && selection_.Check(plan->name);
    }
  }
  Publish(plan);
  return true;
}

bool Session::BeginApi(std::string_view base, bool forward,
                       uint32_t forward_index, CallPlan* plan) {
  if (config_.level == config::Level::kL0) return false;
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  if (forward) {
    // Nested in an API call: neither recorded nor counted.
    if (!collecting() || InApi()) return false;
  } else if (!step_active()) {
    return false;
  }
  plan->kind = record::CallKind::kApi;
  plan->forward = forward;
  plan->step = step();
  plan->construct = config_.level == config::Level::kMix;
  plan->name_id = 0;
  {
    std::lock_guard lock(mu_);
    plan->index = forward ? indices_.NextApi(base) : forward_index;
    plan->name = ApiCallName(base, forward, plan->index);
    plan->dumped = selection_everything_ || selection_.Check(plan->name);
  }
  if (forward) t_open_api = OpenApi{this, generation};
  Publish(plan);
  return true;
}

void Session::CheckEnd(CallPlan* plan) {
  if (selection_everything_) return;
  const bool named = plan->name_id != 0;
  if (plan->forward) {
    const bool keeps_output = selection_.Keeps(true, false);
    std::lock_guard lock(mu_);
    const bool passes = selection_.Check(plan->name);  // always: it may
    plan->output = keeps_output && passes && named;    // close the range
  } else if (plan->kind == record::CallKind::kModule) {
    std::lock_guard lock(mu_);
    plan->dumped = selection_.Check(plan->name);
    plan->input = plan->dumped && selection_.Keeps(false, true) && named;
    plan->output = plan->dumped && selection_.Keeps(false, false) && named;
    if (plan->input || plan->output) selection_.NoteBackwardEntry(plan->name);
  }
}

void Session::EndCall(const CallPlan& plan) {
  if (plan.construct) {
    core_.WriteCall(false, plan.step, plan.name_id, plan.kind,
                    plan.forward ? record::Direction::kForward
                                 : record::Direction::kBackward);
  }
  if (plan.kind == record::CallKind::kModule) {
    if (!selection_everything_) {
      std::lock_guard lock(mu_);
      selection_.EndModule(plan.name);
    }
  } else if (plan.forward && t_open_api.session == this) {
    t_open_api.session = nullptr;
  }
}

bool Session::BeginParamGrad(std::string_view module_base,
                             std::string_view param, CallPlan* plan) {
  if (config_.level == config::Level::kL1 || !keeps_backward_ ||
      !collecting()) {
    return false;
  }
  plan->kind = record::CallKind::kModule;
  plan->forward = false;
  plan->step = step();
  plan->construct = false;  // construct.json has no parameters_grad nodes
  {
    std::lock_guard lock(mu_);
    plan->index = indices_.ParamGrad(module_base, param);
    plan->name = ParamGradName(module_base, plan->index);
    plan->dumped =
        selection_everything_ || selection_.ParamGrad(std::string(module_base));
  }
  if (!plan->dumped) return false;
  plan->input = plan->output = true;
  plan->name_id = core_.Intern(record::InternKind::kName, plan->name);
  return plan->name_id != 0;
}

bool Session::Flush(int timeout_ms) {
  v1::Request req;
  req.mutable_flush();
  v1::Response reply;
  return channel_->Call(std::move(req), timeout_ms, &reply);
}

}  // namespace tprobe::client
