#include "daemon/control_service.h"

#include <unistd.h>

#include "common/control/socket_path.h"
#include "daemon/drain.h"
#include "daemon/live_directive.h"

namespace tprobe::daemon {
namespace {

v1::Response Ok() {
  v1::Response r;
  r.set_ok(true);
  return r;
}

v1::Response Error(const std::string& message) {
  v1::Response r;
  r.set_ok(false);
  r.set_error(message);
  return r;
}

// Keeps the first error of several.
void Keep(Status& first, Status s) {
  if (first.ok() && !s.ok()) first = std::move(s);
}

// A write's outcome, noted as the producer's last error when it failed
// (tprobe status shows it).
Status Noted(ProducerState& state, Status s) {
  if (!s.ok()) state.last_error = "cannot write the dump: " + s.message();
  return s;
}

}  // namespace

ControlService::ControlService(Registry& registry, Logger log)
    : registry_(registry), log_(std::move(log)) {}

std::vector<std::shared_ptr<Producer>> ControlService::Targets(
    const Connection& conn) const {
  if (conn.producer) {
    if (conn.goodbye) return {};
    return {conn.producer};
  }
  return registry_.Snapshot();
}

v1::Response ControlService::Handle(Connection& conn,
                                    const v1::Request& request) {
  if (request.version() != control::kProtocolVersion) {
    return Error("protocol version " + std::to_string(request.version()) +
                 " is not supported: this tprobed speaks version " +
                 std::to_string(control::kProtocolVersion) +
                 "; use a client and daemon from the same tprobe release");
  }
  Status first;
  switch (request.body_case()) {
    case v1::Request::kRegister:
      return Register(conn, request.register_());
    case v1::Request::kStart:
      if (request.start().live()) {
        return ApplyLiveStart(Targets(conn), request.start(), *log_);
      }
      for (const auto& p : Targets(conn)) {
        auto state = p->Lock();
        state->assembler.NoteStep(request.start().step());
        // After overflow_nums overflows no later step gets a directory.
        if (!state->overflow_limit_reached) {
          state->assembler.Tree(request.start().step());
        }
      }
      return Ok();
    case v1::Request::kStop:
      if (request.stop().live()) {
        // Then drains and writes, as every Stop does.
        v1::Response live = ApplyLiveStop(Targets(conn), request.stop(), *log_);
        if (!live.ok()) return live;
      }
      for (const auto& p : Targets(conn)) {
        auto state = p->Lock();
        DrainCommitted(*p, *state, *log_);
        Keep(first, Noted(*state, state->assembler.WriteDirty()));
      }
      break;
    case v1::Request::kStep:
      for (const auto& p : Targets(conn)) {
        auto state = p->Lock();
        DrainCommitted(*p, *state, *log_);
        // The drain may already have read the next step's first records:
        // its held nodes wait for their own API or entry.
        ReleaseHeldNodes(*p, *state, *log_, request.step().step());
        CloseOpenCalls(*state, request.step().step());
        state->assembler.NoteUnclosedCalls(request.step().step(),
                                           request.step().unclosed_calls());
        Keep(first,
             Noted(*state, state->assembler.Finish(request.step().step())));
      }
      break;
    case v1::Request::kFlush:
      for (const auto& p : Targets(conn)) {
        auto state = p->Lock();
        DrainCommitted(*p, *state, *log_);
        Keep(first, Noted(*state, state->assembler.WriteDirty()));
      }
      break;
    case v1::Request::kGoodbye:
      if (!conn.producer) return Error("Goodbye without Register");
      if (conn.goodbye) return Ok();
      first = Finalise(*conn.producer, /*died=*/false,
                       request.goodbye().dropped_no_daemon());
      conn.goodbye = true;
      conn.remove_segment = true;
      log_->info("client {} (pid {}, rank {}) said goodbye",
                 conn.producer->client_id(), conn.producer->pid(),
                 conn.producer->rank());
      break;
    case v1::Request::kStatus:
      return Report();
    case v1::Request::kShutdown:
      conn.stop_daemon = true;
      log_->info("shutdown requested by pid {}", conn.peer.pid);
      return Ok();
    case v1::Request::BODY_NOT_SET:
      return Error("empty request: it carries no message");
  }
  if (!first.ok()) {
    log_->error("cannot write the dump: {}", first.message());
    return Error("cannot write the dump: " + first.message());
  }
  return Ok();
}

v1::Response ControlService::Register(Connection& conn,
                                      const v1::Register& reg) {
  if (conn.producer) {
    return Error("this connection already registered as client " +
                 std::to_string(conn.producer->client_id()));
  }
  const uint64_t id = registry_.NextClientId();
  auto created = Producer::Create(id, conn.peer, reg);
  if (!created.ok()) {
    log_->warn("refused registration of pid {} (rank {}): {}", reg.pid(),
               reg.rank(), created.status().message());
    return Error(created.status().message());
  }
  std::shared_ptr<Producer> producer = std::move(created).value();
  registry_.Add(producer);
  conn.producer = producer;
  log_->info(
      "client {} registered: pid {}, rank {}, {} rings of {} bytes in {}, "
      "task {}, level {}, dump_path {}",
      id, reg.pid(), reg.rank(), producer->segment().ring_count(),
      producer->segment().header()->ring_bytes, producer->segment_name(),
      config::TaskName(producer->config().task),
      config::LevelName(producer->config().level),
      producer->config().dump_path);
  v1::Response r = Ok();
  r.mutable_register_()->set_client_id(id);
  r.mutable_register_()->set_segment_name(producer->segment_name());
  return r;
}

v1::Response ControlService::Report() const {
  v1::Response r = Ok();
  v1::StatusReply* status = r.mutable_status();
  status->set_daemon_pid(::getpid());
  for (const auto& p : registry_.Snapshot()) {
    const Producer::RingCounters c = p->Counters();
    v1::RankStatus* rank = status->add_ranks();
    rank->set_client_id(p->client_id());
    rank->set_pid(p->pid());
    rank->set_rank(p->rank());
    rank->set_ring_fill_bytes(c.fill_bytes);
    rank->set_records(c.records);
    rank->set_bytes(c.bytes);
    rank->set_dropped_ring_full(c.dropped_ring_full);
    rank->set_dropped_too_large(c.dropped_too_large);
    auto state = p->Lock();
    rank->set_step(state->assembler.current_step());
    rank->set_dropped_no_daemon(state->dropped_no_daemon);
    rank->set_last_error(state->last_error);
    rank->set_dump_ended(state->overflow_limit_reached);
  }
  return r;
}

Status ControlService::Finalise(Producer& producer, bool died,
                                uint64_t dropped_no_daemon) {
  Status s;
  {
    auto state = producer.Lock();
    if (state->closed) return s;
    DrainCommitted(producer, *state, *log_);
    ReleaseHeldNodes(producer, *state, *log_);
    CloseOpenCalls(*state);
    if (dropped_no_daemon > state->dropped_no_daemon) {
      state->assembler.AddNoDaemonDrops(
          dropped_no_daemon - state->dropped_no_daemon, /*defer=*/false);
      state->dropped_no_daemon = dropped_no_daemon;
    }
    if (died) state->assembler.MarkProducerDied();
    s = state->assembler.WriteDirty();
    if (!s.ok()) {
      log_->error("client {} (pid {}, rank {}): {}", producer.client_id(),
                  producer.pid(), producer.rank(), s.message());
    }
    state->closed = true;
  }
  registry_.Remove(producer.client_id());
  return s;
}

bool ControlService::AfterReply(Connection& conn) {
  if (conn.remove_segment) {
    shm::Segment::Remove(conn.producer->segment_name());
    conn.remove_segment = false;
  }
  return conn.stop_daemon;
}

void ControlService::HangUp(Connection& conn) {
  AfterReply(conn);
  if (!conn.producer || conn.goodbye) return;
  Producer& p = *conn.producer;
  log_->warn(
      "client {} (pid {}, rank {}) hung up without Goodbye: finalising its "
      "open steps as incomplete (producer_died)",
      p.client_id(), p.pid(), p.rank());
  (void)Finalise(p, /*died=*/true, 0);
  shm::Segment::Remove(p.segment_name());
  conn.goodbye = true;
}

void ControlService::FinishAll() {
  for (const auto& p : registry_.Snapshot()) {
    (void)Finalise(*p, /*died=*/false, 0);
    shm::Segment::Remove(p->segment_name());
  }
}

}  // namespace tprobe::daemon
