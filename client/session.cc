#include "client/session.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "client/daemon_launcher.h"
#include "client/entry_builder.h"
#include "client/exception_boundary.h"
#include "client/thread_slot.h"
#include "common/config/config_proto.h"
#include "common/control/response.h"
#include "common/control/socket_path.h"
#include "common/shm/directive.h"
#include "common/shm/segment.h"

namespace tprobe::client {
namespace {

// The outermost API call open on this thread, if any (a ThreadSlot: each
// field of a thread_local would cost a thread-local lookup of its own).
struct OpenApi {
  const Session* session = nullptr;
  uint64_t generation = 0;
};

OpenApi* ThisThreadApi() { return ThreadSlot<OpenApi>::Get(); }

// ConfigVersion serials: unique in the process, so that an ApiSite filled
// by one session's version never holds for another's.
std::atomic<uint64_t> g_next_version{1};

}  // namespace

Result<std::unique_ptr<Session>> Session::Create(
    const SessionOptions& options) noexcept try {
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
      new Session(cfg, options.dump_path, options.rank,
                  options.connect_timeout_ms, options.risk_level_applies));
  v1::Register reg;
  reg.set_pid(::getpid());
  reg.set_start_time(shm::ProcessStartTime(::getpid()));
  reg.set_rank(options.rank);
  *reg.mutable_config() = config::ToProto(cfg);
  reg.set_ring_count(cfg.ring_count + 1);  // and the boundary ring
  reg.set_ring_bytes(cfg.ring_bytes);
  reg.set_framework(options.framework);
  std::function<Status()> launch;
  if (options.autostart_daemon) {
    const std::string binary = FindDaemonBinary(options.daemon_path);
    launch = [binary, socket] { return LaunchDaemon(binary, socket); };
  }
  session->channel_ = std::make_unique<ControlChannel>(
      &session->recorder_, socket, std::move(reg), std::move(launch));
  // Without a daemon the session goes on (the channel keeps trying); a
  // daemon that refused is the caller's error.
  if (Status opened = session->channel_->Open(options.connect_timeout_ms);
      !opened.ok() && opened.code() != StatusCode::kUnavailable) {
    return Status::Error(opened.message());
  }
  return session;
} catch (...) {
  NoteStopped("Session::Create");
  return Status::Error(
      "tprobe could not start its session (see the line above)");
}

Session::ConfigVersion::ConfigVersion(config::Config c, bool risk_level_applies)
    : serial(g_next_version.fetch_add(1, std::memory_order_relaxed)),
      config(std::move(c)),
      keeps_backward(config::DataModeSelected(config.data_mode, false, true) ||
                     config::DataModeSelected(config.data_mode, false, false)),
      selection(config, risk_level_applies) {}

Session::Session(config::Config config, std::string dump_path, int rank,
                 int connect_timeout_ms, bool risk_level_applies)
    : dump_path_(std::move(dump_path)),
      rank_(rank),
      connect_timeout_ms_(connect_timeout_ms),
      risk_level_applies_(risk_level_applies),
      recorder_(config.policy, config.block_timeout_ms) {
  versions_.push_back(
      std::make_unique<ConfigVersion>(std::move(config), risk_level_applies_));
  current_.store(versions_.back().get(), std::memory_order_release);
}

Session::~Session() {
  // Says goodbye; a destructor must not throw, and this one runs in the
  // library (exception_boundary.h).
  try {
    v1::Request bye;
    bye.mutable_goodbye()->set_dropped_no_daemon(recorder_.dropped_no_daemon());
    {
      // The step in progress, if it produced records since the last Step.
      std::lock_guard lock(mu_);
      const uint32_t step = step_.load(std::memory_order_relaxed);
      const RecordTotals totals = recorder_.Totals();
      v1::StepLedger ledger = ledger_.Close(step, totals, std::nullopt);
      if (ledger.produced() > 0) {
        bye.mutable_goodbye()->set_step(step);
        *bye.mutable_goodbye()->mutable_ledger() = std::move(ledger);
      }
      // A rank that never calls step() ends its one step here.
      if (const v1::EmptyCause why = empty_.Close(Facts(step));
          why != v1::EMPTY_CAUSE_UNSPECIFIED) {
        bye.mutable_goodbye()->set_step(step);
        bye.mutable_goodbye()->set_why_empty(why);
      }
      // The rank's end is a boundary too: a daemon that came back mid-step
      // (its segment held) takes the goodbye.
      recorder_.StepBoundary(totals.produced());
    }
    // The goodbye in the boundary ring is what makes this a clean exit,
    // whatever the daemon's backlog: the daemon finishes the rings from the
    // memory file it holds. The rank then waits at most exit_timeout_ms for
    // the daemon's confirmation (it read the goodbye, so the trees are
    // written); correctness does not depend on it. Without a daemon there is
    // no one to say goodbye to.
    const int exit_timeout_ms = static_cast<int>(config().exit_timeout_ms);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(exit_timeout_ms);
    if (SendBoundary(bye, Boundary::kGoodbye)) {
      (void)recorder_.WaitBoundariesRead(deadline);
    }
    channel_->Close();
  } catch (...) {
    NoteStopped("Session::~Session");
  }
}

bool Session::SendBoundary(const v1::Request& request, Boundary boundary) {
  v1::Request in_band = request;
  in_band.set_version(control::kProtocolVersion);
  const std::string bytes = in_band.SerializeAsString();
  const uint32_t wait_ms = config().policy == config::FullRingPolicy::kBlock
                               ? config().block_timeout_ms
                               : 0;
  Recorder::BoundaryWrite written;
  switch (boundary) {
    case Boundary::kStart:
      written = recorder_.WriteStart(bytes, wait_ms);
      break;
    case Boundary::kStep:
      written = recorder_.WriteBoundary(bytes, wait_ms, request.step().step());
      break;
    case Boundary::kGoodbye:
      written = recorder_.WriteBoundary(bytes, wait_ms);
      break;
  }
  return written == Recorder::BoundaryWrite::kWritten ||
         written == Recorder::BoundaryWrite::kQueued;
}

bool Session::Selected(uint32_t step) const {
  const shm::Directive live = shm::DecodeDirective(recorder_.directive());
  switch (live.mode) {
    case shm::CaptureMode::kCapture:
      return live.Covers(step);
    case shm::CaptureMode::kPause:
      return false;
    case shm::CaptureMode::kConfig:
      break;
  }
  const Selection& selection = this->current().selection;
  return !ended_ && selection.StepSelected(step) &&
         selection.RankSelected(rank_);
}

StepFacts Session::Facts(uint32_t step) const {
  const ConfigVersion& version = this->current();
  StepFacts facts;
  facts.step = step;
  facts.rank = rank_;
  facts.level = version.config.level;
  facts.started = started_;
  facts.rank_selected = Selected(step);
  // Under the config (no live directive), a step it selects for other
  // ranks only.
  facts.step_selected = facts.rank_selected ||
                        (shm::DecodeDirective(recorder_.directive()).mode ==
                             shm::CaptureMode::kConfig &&
                         !ended_ && version.selection.StepSelected(step));
  facts.filtered = !version.selection.everything();
  facts.by_risk_level = version.selection.by_risk_level();
  facts.daemon = recorder_.connected();
  return facts;
}

void Session::UpdateCollecting() {
  const uint32_t step = step_.load(std::memory_order_relaxed);
  const bool selected = Selected(step);
  step_active_.store(started_ && selected, std::memory_order_release);
  collecting_.store(running_ && selected, std::memory_order_release);
}

bool Session::DaemonEndedDump() {
  // The daemon reads a Step from the ring when it gets to it: a Flush waits
  // until this rank's records and boundaries so far are read, so the status
  // is current.
  recorder_.PublishAll();
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

void Session::Start() noexcept try {
  // Task overflow_check: the daemon ends the dump once overflow_nums
  // overflows were written (it sees the statistics; the trainer does not).
  // DaemonEndedDump waits until it has read the previous step.
  bool ask = false;
  if (config().task == config::Task::kOverflowCheck && recorder_.attached()) {
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
                 static_cast<long long>(config().overflow_nums));
  }
  if (const auto last = UnsaidEnd(step)) {
    ended_ = true;
    std::fprintf(stderr,
                 "[tprobe] the configured steps are done (last step %lld); "
                 "tprobe ends successfully and training goes on.\n",
                 static_cast<long long>(*last));
  }
  running_ = true;
  started_ = true;
  UpdateCollecting();
  if (collecting()) SendStart(step);
} catch (...) {
  NoteStopped("Session::Start");
}

std::optional<int64_t> Session::UnsaidEnd(uint32_t step) const {
  const auto last = config::LastStep(config());
  if (ended_ || !last || step <= *last) return std::nullopt;
  return last;
}

void Session::SendStart(uint32_t step) {
  v1::Request req;
  req.mutable_start()->set_step(step);
  // Without a daemon the Start waits in the core for one that attaches
  // before the step's first record (Recorder::WriteStart); a daemon that
  // comes back later in the step gets none of it, and the step belongs to
  // the outage.
  (void)SendBoundary(req, Boundary::kStart);
}

void Session::Stop() noexcept try {
  // The step stays open until Step(): API backward calls after stop()
  // still belong to it, so the daemon needs no word of it.
  std::lock_guard lock(mu_);
  running_ = false;
  UpdateCollecting();
} catch (...) {
  NoteStopped("Session::Stop");
}

void Session::Step(uint64_t unclosed_calls) noexcept try {
  std::lock_guard lock(mu_);
  EndStep(unclosed_calls, /*take_up_config=*/true);
} catch (...) {
  NoteStopped("Session::Step");
}

bool Session::StartIfSelected(bool selected) noexcept try {
  if (config().task == config::Task::kOverflowCheck) return false;
  std::lock_guard lock(mu_);
  const uint32_t step = step_.load(std::memory_order_relaxed);
  if (UnsaidEnd(step) || Selected(step) != selected) return false;
  running_ = true;
  started_ = true;
  // UpdateCollecting's outcome for this selection, which it would read
  // again: a directive that came since is the next Start()'s.
  step_active_.store(selected, std::memory_order_release);
  collecting_.store(selected, std::memory_order_release);
  if (selected) SendStart(step);
  return true;
} catch (...) {
  NoteStopped("Session::StartIfSelected");
  return false;
}

bool Session::StepIfStopped() noexcept try {
  std::lock_guard lock(mu_);
  if (running_ || recorder_.config_generation() != config_generation_) {
    return false;
  }
  // A config offered from now on is taken up by the next Step().
  EndStep(0, /*take_up_config=*/false);
  return true;
} catch (...) {
  NoteStopped("Session::StepIfStopped");
  return false;
}

void Session::EndStep(uint64_t unclosed_calls, bool take_up_config) {
  const uint32_t step = step_.load(std::memory_order_relaxed);
  const RecordTotals totals = recorder_.Totals();
  const int64_t acknowledged = recorder_.BoundaryAcknowledged();
  while (!unacknowledged_.empty() &&
         static_cast<int64_t>(unacknowledged_.front()) <= acknowledged) {
    unacknowledged_.pop_front();
  }
  std::optional<uint32_t> first_unacknowledged;
  if (!unacknowledged_.empty()) first_unacknowledged = unacknowledged_.front();
  v1::StepLedger ledger = ledger_.Close(step, totals, first_unacknowledged);
  std::optional<v1::Outage> outage;
  if (recorder_.connected()) outage = ledger_.TakeOutage();
  // A step collected in part (a live stop came mid-step) still ends.
  const bool ends = step_active_.load(std::memory_order_relaxed) ||
                    Selected(step) || ledger.produced() > 0 || outage;
  // A daemon that came back mid-step takes over here: the step's end goes
  // to it (its rings hold nothing of the step; the ledger says so).
  recorder_.StepBoundary(totals.produced());
  const v1::EmptyCause why_empty = empty_.Close(Facts(step));
  if (ends) {
    v1::Request req;
    req.mutable_step()->set_step(step);
    req.mutable_step()->set_unclosed_calls(unclosed_calls);
    req.mutable_step()->set_why_empty(why_empty);
    *req.mutable_step()->mutable_ledger() = std::move(ledger);
    if (outage) *req.mutable_step()->mutable_outage() = std::move(*outage);
    (void)SendBoundary(req, Boundary::kStep);
    unacknowledged_.push_back(step);
    if (unacknowledged_.size() > 64) unacknowledged_.pop_front();
  }
  indices_.Reset();
  current().selection.ResetStep();
  if (const uint64_t offered = recorder_.config_generation();
      take_up_config && offered != config_generation_ &&
      TakeUpOfferedConfig(step + 1, offered)) {
    config_generation_ = offered;
  }
  generation_.fetch_add(1, std::memory_order_release);
  step_.store(step + 1, std::memory_order_release);
  recorder_.PublishStep(step + 1);
  started_ = running_;
  UpdateCollecting();
}

bool Session::TakeUpOfferedConfig(uint32_t step, uint64_t generation) {
  // Sent after this step's Step record, so the daemon switches this rank's
  // pipeline behind the step's records.
  v1::Request req;
  req.mutable_fetch_config()->set_step(step);
  v1::Response reply;
  if (!channel_->Call(std::move(req), connect_timeout_ms_, &reply)) {
    // No answer: asked again at the next step boundary. An answer without
    // a config (a restarted daemon offered none) is final.
    return !reply.error().empty();
  }
  auto offered = config::FromProto(reply.config());
  if (!offered.ok()) {
    std::fprintf(stderr,
                 "[tprobe] the daemon offered a bad config (%s); the "
                 "config stays as it was\n",
                 offered.status().message().c_str());
    return true;
  }
  channel_->UpdateConfig(reply.config());
  ended_ = false;
  versions_.push_back(std::make_unique<ConfigVersion>(
      std::move(offered).value(), risk_level_applies_));
  current_.store(versions_.back().get(), std::memory_order_release);
  const char* from = generation == own_generation_
                         ? "its config.json (dump_enable)"
                         : "'tprobe configure'";
  std::fprintf(stderr,
               "[tprobe] step %u on: the config from %s (task %s, level %s)\n",
               step, from, std::string(config::TaskName(config().task)).c_str(),
               std::string(config::LevelName(config().level)).c_str());
  return true;
}

Status Session::Configure(const std::string& config_path) noexcept try {
  auto loaded = config::LoadConfigFile(config_path);
  if (!loaded.ok()) return loaded.status();
  config::Config cfg = std::move(loaded).value();
  if (!dump_path_.empty()) cfg.dump_path = dump_path_;
  v1::Request req;
  *req.mutable_configure()->mutable_config() = config::ToProto(cfg);
  v1::Response reply;
  if (!channel_->Call(std::move(req), connect_timeout_ms_, &reply)) {
    return Status::Unavailable(
        reply.error().empty() ? "the daemon did not answer" : reply.error());
  }
  if (Status offered = control::StatusOf(reply); !offered.ok()) {
    return offered;
  }
  std::lock_guard lock(mu_);
  // The daemon bumped config_generation before it answered. A step that
  // started takes the config up at its Step(), after its records.
  const uint64_t offered = recorder_.config_generation();
  own_generation_ = offered;
  if (!started_ && offered != config_generation_ &&
      TakeUpOfferedConfig(step_.load(std::memory_order_relaxed), offered)) {
    config_generation_ = offered;
    UpdateCollecting();
  }
  return Status::Ok();
} catch (...) {
  NoteStopped("Session::Configure");
  return Status::Error(
      "tprobe could not apply the config (see the line above)");
}

void Session::SetStep(uint32_t step) noexcept try {
  std::lock_guard lock(mu_);
  step_.store(step, std::memory_order_release);
  UpdateCollecting();
} catch (...) {
  NoteStopped("Session::SetStep");
}

void Session::Publish(const ConfigVersion& version, CallPlan* plan,
                      ApiSite* site) {
  // With scope or list, a module call is checked again when it ends: a
  // forward call's outputs and parameters, a backward call's everything.
  // Until then they may pass (a range opened by a child can take them in);
  // an API call has no children, so only what passed when it began can.
  const Selection& selection = version.selection;
  const bool at_end =
      !selection.everything() && plan->kind == record::CallKind::kModule;
  plan->input = selection.Keeps(plan->forward, true) &&
                (plan->dumped || (at_end && !plan->forward));
  plan->output =
      selection.Keeps(plan->forward, false) && (plan->dumped || at_end);
  if (plan->construct || plan->input || plan->output || plan->dumped) {
    plan->name_id = InternName(*plan, site);
    if (plan->name_id == 0 && (plan->input || plan->output)) {
      // Dumped, and lost: the step is not empty for want of calls.
      if (plan->dumped) empty_.NoteEntry();
      if (recorder_.attached()) ledger_.NoteLostEntry(plan->name);
    }
  }
  if (plan->construct) {
    // Only a group's first call locks (to write the group's CallBegin).
    if (in_group_.load(std::memory_order_acquire) &&
        group_name_id_.load(std::memory_order_acquire) == 0) {
      OpenGroup(plan->step);
    }
    const auto direction = plan->forward ? record::Direction::kForward
                                         : record::Direction::kBackward;
    plan->construct = plan->name_id != 0 &&
                      recorder_.WriteCall(true, plan->step, plan->name_id,
                                          plan->kind, direction);
  }
}

uint32_t Session::InternName(const CallPlan& plan, ApiSite* site) {
  if (site == nullptr) {
    return recorder_.Intern(record::InternKind::kName, plan.name);
  }
  // The token first: if Intern claims the ring again, the id is kept
  // under the old token, which no later call matches.
  const uint64_t token = recorder_.InternToken();
  std::vector<uint32_t>& ids = site->name_ids;
  if (token != site->intern_token) {
    ids.clear();
    site->intern_token = token;
  } else if (plan.index < ids.size() && ids[plan.index] != 0) {
    return ids[plan.index];
  }
  const uint32_t id = recorder_.Intern(record::InternKind::kName, plan.name);
  if (id != 0 && token != 0 && plan.index < ApiSite::kMaxNameIds) {
    if (ids.size() <= plan.index) ids.resize(plan.index + 1);
    ids[plan.index] = id;
  }
  return id;
}

void Session::Refill(ConfigVersion& version, std::string_view base,
                     ApiSite* site) {
  site->version = 0;  // until it is whole
  site->count = indices_.ApiCounter(base);
  site->risk_passes = version.selection.by_risk_level() &&
                      version.selection.Check(ApiCallName(base, true, 0));
  site->version = version.serial;
}

void Session::BeginGroup(std::string_view name) noexcept try {
  if (config().level != config::Level::kMix) return;
  std::lock_guard lock(mu_);
  CloseGroup();
  group_ = name;
  in_group_.store(true, std::memory_order_release);
} catch (...) {
  NoteStopped("Session::BeginGroup");
}

void Session::EndGroup() noexcept try {
  if (config().level != config::Level::kMix) return;
  std::lock_guard lock(mu_);
  CloseGroup();
} catch (...) {
  NoteStopped("Session::EndGroup");
}

void Session::OpenGroup(uint32_t step) {
  std::lock_guard lock(mu_);
  if (!in_group_.load(std::memory_order_relaxed) ||
      group_name_id_.load(std::memory_order_relaxed) != 0) {
    return;
  }
  const uint32_t id = recorder_.Intern(record::InternKind::kName, group_);
  if (id != 0 && recorder_.WriteCall(true, step, id, record::CallKind::kGroup,
                                     record::Direction::kForward)) {
    group_step_ = step;
    group_name_id_.store(id, std::memory_order_release);
  }
}

void Session::CloseGroup() {
  if (const uint32_t id = group_name_id_.load(std::memory_order_relaxed);
      id != 0) {
    recorder_.WriteCall(false, group_step_, id, record::CallKind::kGroup,
                        record::Direction::kForward);
  }
  in_group_.store(false, std::memory_order_release);
  group_name_id_.store(0, std::memory_order_release);
  group_.clear();
}

bool Session::InApi() const {
  const OpenApi* open = ThisThreadApi();
  return open != nullptr && open->session == this &&
         open->generation == generation_.load(std::memory_order_acquire);
}

bool Session::BeginModule(std::string_view base, bool forward,
                          uint32_t forward_index, CallPlan* plan) noexcept try {
  ConfigVersion& version = this->current();
  const bool l1 = version.config.level == config::Level::kL1;
  if (!collecting() || InApi() || (l1 && !DumpedAlone(base))) return false;
  plan->kind = record::CallKind::kModule;
  plan->forward = forward;
  plan->step = step();
  plan->construct = !l1;  // L0 and mix keep every module node, L1 none
  plan->name_id = 0;
  plan->index = forward ? indices_.NextModule(base) : forward_index;
  SetModuleCallName(&plan->name, base, forward, plan->index);
  empty_.NoteCall();
  if (version.selection.everything()) {
    plan->dumped = true;
  } else {
    version.selection.BeginModule(plan->name);
    // A backward module call is checked only when it ends (CheckEnd).
    plan->dumped = forward && version.selection.Check(plan->name);
  }
  Publish(version, plan);
  return true;
} catch (...) {
  NoteStopped("Session::BeginModule");
  return false;
}

bool Session::BeginApi(std::string_view base, bool forward,
                       uint32_t forward_index, CallPlan* plan,
                       ApiSite* site) noexcept try {
  ConfigVersion& version = this->current();
  if (version.config.level == config::Level::kL0) return false;
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
  plan->construct = version.config.level == config::Level::kMix;
  plan->name_id = 0;
  if (!forward) site = nullptr;
  if (site != nullptr && site->version != version.serial) {
    Refill(version, base, site);
  }
  plan->index = !forward          ? forward_index
                : site != nullptr ? indices_.NextApi(site->count)
                                  : indices_.NextApi(base);
  SetApiCallName(&plan->name, base, forward, plan->index);
  empty_.NoteCall();
  Selection& selection = version.selection;
  plan->dumped =
      selection.everything() || (site != nullptr && selection.by_risk_level()
                                     ? site->risk_passes
                                     : selection.Check(plan->name));
  if (OpenApi* open = forward ? ThisThreadApi() : nullptr) {
    *open = OpenApi{this, generation};
  }
  Publish(version, plan, site);
  return true;
} catch (...) {
  NoteStopped("Session::BeginApi");
  return false;
}

void Session::CheckEnd(CallPlan* plan) noexcept try {
  Selection& selection = current().selection;
  if (selection.everything()) return;
  const bool named = plan->name_id != 0;
  if (plan->forward) {
    // Checked again always (it may close a range), unless risk_level alone
    // filters: then the answer is the one the call's start got.
    const bool passes =
        selection.by_risk_level() ? plan->dumped : selection.Check(plan->name);
    plan->output = selection.Keeps(true, false) && passes && named;
  } else if (plan->kind == record::CallKind::kModule) {
    plan->dumped = selection.Check(plan->name);
    plan->input = plan->dumped && selection.Keeps(false, true) && named;
    plan->output = plan->dumped && selection.Keeps(false, false) && named;
    if (plan->input || plan->output) selection.NoteBackwardEntry(plan->name);
  }
} catch (...) {
  NoteStopped("Session::CheckEnd");
}

void Session::EndCall(const CallPlan& plan) noexcept try {
  if (plan.construct) {
    recorder_.WriteCall(false, plan.step, plan.name_id, plan.kind,
                        plan.forward ? record::Direction::kForward
                                     : record::Direction::kBackward);
  }
  if (plan.kind == record::CallKind::kModule) {
    Selection& selection = current().selection;
    if (!selection.everything()) selection.EndModule(plan.name);
  } else if (OpenApi* open = plan.forward ? ThisThreadApi() : nullptr;
             open != nullptr && open->session == this) {
    open->session = nullptr;
  }
} catch (...) {
  NoteStopped("Session::EndCall");
}

bool Session::KeepsParamGrad(std::string_view module_base) {
  const ConfigVersion& version = this->current();
  return version.keeps_backward && collecting() &&
         (version.config.level != config::Level::kL1 ||
          DumpedAlone(module_base));
}

bool Session::PlanParamGrad(std::string_view module_base, uint32_t index,
                            CallPlan* plan) {
  ConfigVersion& version = this->current();
  plan->kind = record::CallKind::kModule;
  plan->forward = false;
  plan->step = step();
  plan->construct = false;  // construct.json has no parameters_grad nodes
  plan->index = index;
  SetParamGradName(&plan->name, module_base, plan->index);
  plan->dumped = version.selection.everything() ||
                 version.selection.ParamGrad(module_base);
  if (!plan->dumped) return false;
  plan->input = plan->output = true;
  plan->name_id = recorder_.Intern(record::InternKind::kName, plan->name);
  if (plan->name_id == 0) {
    empty_.NoteEntry();  // dumped, and lost
    if (recorder_.attached()) ledger_.NoteLostEntry(plan->name);
  }
  return plan->name_id != 0;
}

bool Session::BeginParamGrad(std::string_view module_base,
                             std::string_view param, CallPlan* plan) noexcept
    try {
  return KeepsParamGrad(module_base) &&
         PlanParamGrad(module_base, indices_.ParamGrad(module_base, param),
                       plan);
} catch (...) {
  NoteStopped("Session::BeginParamGrad");
  return false;
}

void Session::ReserveParamGrad(std::string_view module_base) noexcept try {
  CallPlan plan;
  if (!KeepsParamGrad(module_base) ||
      !PlanParamGrad(module_base, indices_.NextParamGradPass(module_base),
                     &plan)) {
    return;
  }
  EntryBuilder entry(recorder());
  WriteEntry(plan, 0, entry);
} catch (...) {
  NoteStopped("Session::ReserveParamGrad");
}

void Session::DumpAloneAtL1(std::string base) noexcept try {
  std::lock_guard lock(alone_mu_);
  if (std::find(alone_.begin(), alone_.end(), base) == alone_.end()) {
    alone_.push_back(std::move(base));
  }
} catch (...) {
  NoteStopped("Session::DumpAloneAtL1");
}

bool Session::DumpedAlone(std::string_view base) {
  std::lock_guard lock(alone_mu_);
  return std::find(alone_.begin(), alone_.end(), base) != alone_.end();
}

bool Session::WriteEntry(const CallPlan& plan, uint32_t stack_id,
                         EntryBuilder& entry) noexcept try {
  empty_.NoteEntry();
  if (entry.Write(plan.step, plan.name_id, stack_id)) return true;
  if (plan.name_id != 0 && recorder_.attached())
    ledger_.NoteLostEntry(plan.name);
  return false;
} catch (...) {
  NoteStopped("Session::WriteEntry");
  return false;
}

bool Session::Flush(int timeout_ms) noexcept try {
  recorder_.PublishAll();
  v1::Request req;
  req.mutable_flush();
  v1::Response reply;
  const bool flushed = channel_->Call(std::move(req), timeout_ms, &reply);
  // A flush is answered once the steps before it are written: its error is
  // the write error of those steps (their boundaries travel in the ring,
  // with no reply of their own). The trainer's user hears of it once.
  if (!flushed && !reply.error().empty() &&
      !write_error_reported_.exchange(true)) {
    std::fprintf(stderr,
                 "[tprobe] tprobed: %s (reported once; training goes on, "
                 "tprobed retries the write; 'tprobe status' shows the "
                 "state)\n",
                 reply.error().c_str());
  }
  return flushed;
} catch (...) {
  NoteStopped("Session::Flush");
  return false;
}

}  // namespace tprobe::client
