#include "daemon/control/control_service.h"

#include <unistd.h>

#include <algorithm>
#include <mutex>

#include "common/config/config_proto.h"
#include "common/config/dump_dir.h"
#include "common/control/response.h"
#include "common/control/socket_path.h"
#include "common/dump/journal.h"
#include "common/record_losses.h"
#include "daemon/control/live_directive.h"
#include "daemon/ingest/rank_pipeline.h"
#include "daemon/process/fs_identity.h"

namespace tprobe::daemon {
namespace {

v1::Response Ok() { return control::ResponseOf(Status::Ok()); }

// A refusal: a request this connection may not make, or that is malformed
// (kInvalidArgument).
v1::Response Refused(const std::string& message) {
  return control::ResponseOf(Status::InvalidArgument(message));
}

// A rank's Start, Step or Goodbye on the socket: they travel only in its
// boundary ring, in order with its records, so the socket never races them.
v1::Response InTheRing() {
  return Refused(
      "a rank's Start, Step and Goodbye travel in its boundary ring, not on "
      "the socket (tprobe start sends a live Start)");
}

// Keeps the first error of several.
void Keep(Status& first, Status s) {
  if (first.ok() && !s.ok()) first = std::move(s);
}

// Root and the daemon's own user run the daemon: their CLI reaches every
// rank, and only they may shut it down.
bool IsOperator(const PeerCredentials& peer) {
  return peer.uid == 0 || peer.uid == ::geteuid();
}

}  // namespace

ControlService::ControlService(Registry& registry, Logger log,
                               RankLimits limits)
    : registry_(registry), log_(std::move(log)), limits_(limits) {}

std::vector<std::shared_ptr<Rank>> ControlService::Targets(
    const Connection& conn) const {
  if (conn.producer) {
    if (conn.hung_up) return {};
    return {conn.producer};
  }
  return Visible(conn);
}

std::vector<std::shared_ptr<Rank>> ControlService::Visible(
    const Connection& conn) const {
  std::vector<std::shared_ptr<Rank>> producers = registry_.Snapshot();
  if (IsOperator(conn.peer)) return producers;
  std::erase_if(producers, [&](const std::shared_ptr<Rank>& p) {
    return p->uid() != conn.peer.uid;
  });
  return producers;
}

void ControlService::Queue(const Connection& conn, Command command, bool wait,
                           Reply reply) {
  const auto targets = Targets(conn);
  if (!wait || targets.empty()) {
    for (const auto& p : targets) p->Enqueue(command);
    registry_.Wake();
    reply(Ok());
    return;
  }
  // One reply once every target ran the command: the first error wins.
  struct Join {
    std::mutex mu;
    size_t left;
    Status first;
    Reply reply;
  };
  auto join = std::make_shared<Join>();
  join->left = targets.size();
  join->reply = std::move(reply);
  command.done = [join, log = log_](Status s) {
    std::unique_lock lock(join->mu);
    Keep(join->first, std::move(s));
    if (--join->left != 0) return;
    const Status first = join->first;
    lock.unlock();
    join->reply(first.ok() ? Ok()
                           : control::ResponseOf(Status::Error(
                                 "cannot write the dump: " + first.message())));
  };
  for (const auto& p : targets) p->Enqueue(command);
  registry_.Wake();
}

void ControlService::Handle(Connection& conn, const v1::Request& request,
                            Reply reply) {
  if (request.version() != control::kProtocolVersion) {
    return reply(
        Refused("protocol version " + std::to_string(request.version()) +
                " is not supported: this tprobed speaks version " +
                std::to_string(control::kProtocolVersion) +
                "; use a client and daemon from the same tprobe release"));
  }
  Command command;
  switch (request.body_case()) {
    case v1::Request::kRegister:
      return reply(Register(conn, request.register_()));
    case v1::Request::kStart:
      if (!request.start().live()) return reply(InTheRing());
      // From the CLI: a capture directive, read by the ranks themselves.
      return reply(control::ResponseOf(
          ApplyLiveStart(Targets(conn), request.start(), *log_)));
    case v1::Request::kStep:
    case v1::Request::kGoodbye:
      return reply(InTheRing());
    case v1::Request::kStop: {
      // `tprobe stop` (no registration) pauses the ranks it names (live)
      // and has the open steps written; it is answered at once (control
      // never waits behind a rank's backlog), or with --wait once they are
      // written.
      if (request.stop().live()) {
        Status live = ApplyLiveStop(Targets(conn), request.stop(), *log_);
        if (!live.ok()) return reply(control::ResponseOf(live));
      }
      command.kind = Command::Kind::kStop;
      command.write_open = conn.producer == nullptr;
      return Queue(conn, std::move(command),
                   /*wait=*/conn.producer == nullptr && request.stop().wait(),
                   std::move(reply));
    }
    case v1::Request::kFlush:
      command.kind = Command::Kind::kFlush;
      return Queue(conn, std::move(command), /*wait=*/true, std::move(reply));
    case v1::Request::kConfigure: {
      auto config = config::FromProto(request.configure().config());
      if (!config.ok()) {
        return reply(control::ResponseOf(
            Status::InvalidArgument(config.status().message())));
      }
      // From a rank: its own config.json changed (msprobe's dump_enable),
      // for it alone. From the CLI: every rank it may reach.
      return reply(control::ResponseOf(ApplyLiveConfigure(
          conn.producer ? std::vector<std::shared_ptr<Rank>>{conn.producer}
                        : Targets(conn),
          *config, *log_)));
    }
    case v1::Request::kFetchConfig:
      return reply(FetchConfig(conn, request.fetch_config()));
    case v1::Request::kStatus:
      return reply(Report(conn));
    case v1::Request::kShutdown:
      if (!IsOperator(conn.peer)) {
        log_->warn("refused a shutdown from uid {} (pid {})", conn.peer.uid,
                   conn.peer.pid);
        return reply(control::ResponseOf(Status::PermissionDenied(
            "permission denied: only root and uid " +
            std::to_string(::geteuid()) +
            " (the daemon's user) may shut down tprobed, which serves every "
            "user's ranks; not uid " +
            std::to_string(conn.peer.uid))));
      }
      conn.stop_daemon = true;
      log_->info("shutdown requested by pid {}", conn.peer.pid);
      return reply(Ok());
    case v1::Request::BODY_NOT_SET:
      return reply(Refused("empty request: it carries no message"));
  }
  reply(Refused("unknown request"));
}

v1::Response ControlService::Register(Connection& conn,
                                      const v1::Register& reg) {
  if (conn.producer) {
    return Refused("this connection already registered as client " +
                   std::to_string(conn.producer->client_id()));
  }
  const uint64_t id = registry_.NextClientId();
  auto created = Rank::Create(id, conn.peer, reg, limits_);
  if (!created.ok()) {
    log_->warn("refused registration of pid {} (rank {}): {}", reg.pid(),
               reg.rank(), created.status().message());
    return control::ResponseOf(created.status());
  }
  std::shared_ptr<Rank> producer = std::move(created).value();
  {
    FsIdentity as_rank(producer->uid(), producer->gid(), producer->groups());
    if (as_rank.ok()) RecoverJournals(*producer);
  }
  registry_.Add(producer);
  conn.producer = producer;
  log_->info(
      "client {} registered: pid {}, rank {}, {} rings of {} bytes in {}, "
      "task {}, level {}, dump_path {}",
      id, reg.pid(), reg.rank(), producer->segment().ring_count(),
      producer->segment().ring_bytes(), producer->segment_name(),
      config::TaskName(producer->config().task),
      config::LevelName(producer->config().level),
      producer->config().dump_path);
  v1::Response r = Ok();
  r.mutable_register_()->set_client_id(id);
  r.mutable_register_()->set_segment_name(producer->segment_name());
  return r;
}

v1::Response ControlService::FetchConfig(const Connection& conn,
                                         const v1::FetchConfig& fetch) {
  if (!conn.producer) {
    return Refused("FetchConfig needs a registered rank");
  }
  std::shared_ptr<const Rank::Offer> offered = conn.producer->Offered();
  if (!offered) {
    return control::ResponseOf(
        Status::NothingToDo("no config was offered to this rank"));
  }
  // Behind the records the rank sent before it asked: they were made under
  // the old config.
  Command command;
  command.kind = Command::Kind::kConfigure;
  command.step = fetch.step();
  command.config =
      std::shared_ptr<const config::Config>(offered, &offered->config);
  command.write_path = offered->write_path;
  conn.producer->Enqueue(std::move(command));
  registry_.Wake();
  v1::Response r = Ok();
  *r.mutable_config() = config::ToProto(offered->config);
  return r;
}

void ControlService::RecoverJournals(const Rank& producer) const {
  const AssemblerOptions& mine = producer.options();
  for (const auto& p : registry_.Snapshot()) {
    // A registered producer of the same directories is still writing them.
    if (p->options().write_path == mine.write_path &&
        p->options().rank == mine.rank) {
      return;
    }
  }
  auto recovered =
      dump::RecoverRank(mine.write_path, config::RankDirName(mine.rank));
  if (!recovered.ok()) {
    log_->error("cannot recover the journals of rank {} under {}: {}",
                mine.rank, mine.write_path, recovered.status().message());
    return;
  }
  for (const std::string& dir : *recovered) {
    log_->warn(
        "recovered {} from the journal a stopped daemon left (marked "
        "incomplete)",
        dir);
  }
}

v1::Response ControlService::Report(const Connection& conn) const {
  v1::Response r = Ok();
  v1::StatusReply* status = r.mutable_status();
  status->set_daemon_pid(::getpid());
  for (const auto& p : Visible(conn)) {
    const Rank::RingCounters c = p->Counters();
    v1::RankStatus* rank = status->add_ranks();
    rank->set_client_id(p->client_id());
    rank->set_pid(p->pid());
    rank->set_rank(p->rank());
    rank->set_ring_fill_bytes(c.fill_bytes);
    rank->set_records(c.records);
    rank->set_bytes(c.bytes);
#define TPROBE_SET_(name) rank->set_dropped_##name(c.dropped.name);
    TPROBE_RING_LOSSES(TPROBE_SET_)
#undef TPROBE_SET_
    const PublishedStatus published = p->Published();
    rank->set_step(published.step);
    rank->set_dropped_no_daemon(published.dropped_no_daemon);
    rank->set_last_error(published.last_error);
    rank->set_dump_ended(published.dump_ended);
    rank->set_records_behind(c.records -
                             std::min(c.records, published.records_read));
    rank->set_steps_open(published.steps_open);
    rank->set_process_gone(p->ProcessGone());
    if (published.outage) {
      rank->set_had_outage(true);
      rank->set_outage_first_step(published.outage->first_step);
      rank->set_outage_last_step(published.outage->last_step);
      rank->set_outage_records_lost(published.outage->dropped.Total() +
                                    published.outage->read_by_lost_daemon);
    }
  }
  return r;
}

void ControlService::HangUp(Connection& conn) {
  if (!conn.producer || conn.hung_up) return;
  Command command;
  command.kind = Command::Kind::kHangUp;
  conn.producer->Enqueue(std::move(command));
  conn.hung_up = true;
  registry_.Wake();
}

void ControlService::FinishAll() {
  for (const auto& p : registry_.Snapshot()) {
    auto state = p->Lock();
    FsIdentity as_rank(p->uid(), p->gid(), p->groups());
    if (as_rank.ok()) FinishPipeline(*p, *state, registry_, *log_);
  }
}

}  // namespace tprobe::daemon
