// One pass over a rank: its commands, its drain, its boundaries
// (rank_pipeline.h).

#include "daemon/ingest/rank_pipeline.h"

#include <algorithm>

#include "daemon/ingest/drain.h"
#include "daemon/ingest/step_accounting.h"

namespace tprobe::daemon {
namespace {

constexpr size_t kCommandsPerPass = 64;

void LogWriteError(const Rank& p, RankState& state, spdlog::logger& log,
                   const Status& s) {
  if (s.ok()) return;
  std::string error = std::string(kWriteErrorPrefix) + s.message();
  if (error == state.last_error) return;  // logged once
  state.last_error = std::move(error);
  log.error("client {} (pid {}, rank {}): {}", p.client_id(), p.pid(), p.rank(),
            s.message());
}

// How a rank ends: its Goodbye was read from its boundary ring, its
// process is gone (a goodbye in its ring still makes that a clean exit), or
// the daemon stops.
enum class End { kGoodbye, kGone, kShutdown };

Status Finalise(Rank& p, RankState& state, Registry& registry,
                spdlog::logger& log, End end);
Status Apply(Rank& p, RankState& state, Registry& registry, spdlog::logger& log,
             const Command& c);

// Drains (up to `batch` records, 0: no limit; or each ring up to `targets`)
// and runs each boundary the drain reaches, in the order the rank wrote
// them. A Goodbye finalises the rank, or, with `stop_at_goodbye`, is
// left in state.boundary for the caller. Returns the records and
// boundaries consumed; *first_error, when given, keeps the first write
// error of the boundaries run (a command that waits reports it).
size_t DrainAndRun(Rank& p, RankState& state, Registry& registry,
                   spdlog::logger& log, size_t batch,
                   const std::vector<uint64_t>* targets,
                   std::optional<uint32_t> through, bool targets_final,
                   bool stop_at_goodbye, Status* first_error = nullptr) {
  size_t work = 0;
  while (!state.closed) {
    if (!state.boundary) {
      work += targets != nullptr
                  ? DrainTo(p, state, *targets, log, through, targets_final)
                  : DrainSome(p, state, batch, log);
    }
    if (!state.boundary) break;
    const Command c = RankCommand(state.boundary->request);
    if (c.kind == Command::Kind::kGoodbye && stop_at_goodbye) break;
    ++work;
    // A Goodbye's record is freed by Finalise, once the trees are written.
    Status s = Apply(p, state, registry, log, c);
    if (c.kind != Command::Kind::kGoodbye) ReleaseBoundary(state);
    LogWriteError(p, state, log, s);
    if (first_error != nullptr && first_error->ok()) *first_error = s;
    if (targets == nullptr && batch != 0 && work >= batch) break;
  }
  return work;
}

// Drains everything committed, running the boundaries on the way, writes
// every tree, and forgets the rank. A Goodbye in the boundary ring makes
// it a clean exit, whatever `end` says (the rank's process may be gone, but
// it said goodbye first): its ledger settles the step in progress, and its
// why_empty is that step's. Without one the step in progress is settled
// from the daemon's count.
Status Finalise(Rank& p, RankState& state, Registry& registry,
                spdlog::logger& log, End end) {
  if (state.closed) return Status::Ok();
  const std::vector<uint64_t> heads = CommittedHeads(p);
  DrainAndRun(p, state, registry, log, 0, &heads, UINT32_MAX,
              /*targets_final=*/true, /*stop_at_goodbye=*/true);
  std::optional<Command> goodbye;
  if (state.boundary && state.boundary->request.has_goodbye()) {
    goodbye = RankCommand(state.boundary->request);
    end = End::kGoodbye;
    state.dropped_no_daemon =
        std::max(state.dropped_no_daemon, goodbye->dropped_no_daemon);
  }
  const bool died = end == End::kGone;
  if (died) {
    log.warn(
        "client {} (pid {}, rank {}) died: its open step is finalised as "
        "incomplete (producer_died)",
        p.client_id(), p.pid(), p.rank());
  } else if (end == End::kGoodbye) {
    log.info("client {} (pid {}, rank {}) said goodbye", p.client_id(), p.pid(),
             p.rank());
  }
  DrainCommitted(p, state, log);
  ReleaseHeldEntries(p, state, log, UINT32_MAX);
  ReleaseHeldNodes(p, state, log);
  CloseOpenCalls(state);
  if (goodbye && goodbye->ledger) {
    SettleStep(state, goodbye->step, *goodbye->ledger);
  } else {
    SettleOpenStep(state);
  }
  ReleaseSettledTensors(p, state, log);
  if (goodbye) state.assembler.NoteWhyEmpty(goodbye->step, goodbye->why_empty);
  if (died) state.assembler.MarkProducerDied();
  Status s = state.assembler.Finish(UINT32_MAX);
  LogWriteError(p, state, log, s);
  if (!s.ok()) {
    // Nothing retries them now: say which steps are not on disk.
    std::string lost;
    for (uint32_t step : state.assembler.OpenSteps()) {
      lost += (lost.empty() ? "" : ", ") + std::to_string(step);
    }
    log.error(
        "client {} (pid {}, rank {}): steps {} could not be written ({}); "
        "what their journals hold comes back with 'tprobe recover {}' once "
        "the dump path is writable, the rest is lost",
        p.client_id(), p.pid(), p.rank(), lost, s.message(),
        state.assembler.options().write_path);
  }
  state.closed = true;
  registry.Remove(p.client_id());
  // The rank waiting for its goodbye to be read now knows its trees are
  // written.
  ReleaseBoundary(state);
  // Commands queued after the end (a CLI flush) have nothing left to do.
  for (Command& c : p.CloseQueue()) {
    if (c.done) c.done(Status::Ok());
  }
  return s;
}

// Runs a command whose records were drained.
Status Apply(Rank& p, RankState& state, Registry& registry, spdlog::logger& log,
             const Command& c) {
  if (state.closed) return Status::Ok();
  Status s;
  switch (c.kind) {
    case Command::Kind::kStart:
      state.assembler.NoteStep(c.step);
      // After overflow_nums overflows no later step gets a directory.
      if (!state.overflow_limit_reached) state.assembler.Tree(c.step);
      break;
    case Command::Kind::kStop:
      if (c.write_open) s = state.assembler.WriteDirty();
      break;
    case Command::Kind::kStep:
      // The drain may already have read the next step's first records:
      // its held nodes wait for their own API or entry.
      ReleaseHeldEntries(p, state, log, c.step);
      ReleaseHeldNodes(p, state, log, c.step);
      CloseOpenCalls(state, c.step);
      state.assembler.NoteUnclosedCalls(c.step, c.unclosed_calls);
      state.assembler.NoteWhyEmpty(c.step, c.why_empty);
      if (c.outage) NoteOutage(state, *c.outage);
      if (c.ledger) {
        SettleStep(state, c.step, *c.ledger);
        ReleaseSettledTensors(p, state, log);
      }
      s = state.assembler.Finish(c.step);
      break;
    case Command::Kind::kFlush:
      s = state.assembler.WriteDirty();
      break;
    case Command::Kind::kGoodbye:
      // Read from the boundary ring, where Finalise finds it.
      return Finalise(p, state, registry, log, End::kGoodbye);
    case Command::Kind::kConfigure: {
      // The client records step c.step on under the new config; what was
      // drained before it was made under the old one.
      state.config = *c.config;
      AssemblerOptions capture;
      SetCaptureOptions(state.config, &capture);
      capture.dump_path = state.config.dump_path;
      capture.write_path = c.write_path;
      state.assembler.SetCapture(capture);
      // A new config starts the dump afresh, overflow_nums included.
      state.overflows_dumped = 0;
      state.overflow_limit_reached = false;
      log.info(
          "client {} (pid {}, rank {}) records step {} on under a new "
          "config: task {}, level {}, into {}",
          p.client_id(), p.pid(), p.rank(), c.step, capture.task, capture.level,
          capture.write_path);
      break;
    }
    case Command::Kind::kHangUp:
      state.hung_up = true;
      log.info(
          "client {} (pid {}, rank {}) hung up; once its process is gone its "
          "rings are read to the end (a goodbye there is a clean exit)",
          p.client_id(), p.pid(), p.rank());
      break;
  }
  return s;
}

// A queued control command: first the records (and boundaries) the rank
// committed before it arrived, then the command.
Status RunCommand(Rank& p, RankState& state, Registry& registry,
                  spdlog::logger& log, const Command& c) {
  if (state.closed) return Status::Ok();
  // A command reads the records of the steps it is about past the
  // open-step bound; a Configure, those made under the old config.
  std::optional<uint32_t> through = c.step;
  if (c.kind == Command::Kind::kConfigure) {
    through = c.step > 0 ? std::optional<uint32_t>(c.step - 1) : std::nullopt;
  }
  Status drained;
  DrainAndRun(p, state, registry, log, 0, &c.targets, through,
              /*targets_final=*/false, /*stop_at_goodbye=*/false, &drained);
  Status s = Apply(p, state, registry, log, c);
  LogWriteError(p, state, log, s);
  // The steps the rank closed before the command failed to be written: a
  // command that waits (a flush) says so.
  return s.ok() ? drained : s;
}

}  // namespace

size_t RunPipeline(Rank& producer, RankState& state, Registry& registry,
                   spdlog::logger& log, size_t batch) {
  size_t work = 0;
  // A bounded number of commands per pass, so that the status stays current
  // while a rank's commands arrive faster than its steps are written.
  for (size_t n = 0; n < kCommandsPerPass || batch == 0; ++n) {
    std::optional<Command> command = producer.TakeCommand();
    if (!command) break;
    Status s = RunCommand(producer, state, registry, log, *command);
    // Published before the reply, so a Status sent after it sees the
    // command's effect (overflow_check's end of the dump, say).
    producer.Publish(state);
    if (command->done) command->done(std::move(s));
    ++work;
  }
  if (!state.closed) {
    work += DrainAndRun(producer, state, registry, log, batch, nullptr,
                        std::nullopt, /*targets_final=*/false,
                        /*stop_at_goodbye=*/false);
  }
  // Gone without a goodbye in its rings (Finalise reads them to the end
  // first): it died.
  if (state.hung_up && !state.closed && producer.ProcessGone()) {
    (void)Finalise(producer, state, registry, log, End::kGone);
    ++work;
  }
  if (!state.closed) {
    LogWriteError(producer, state, log, state.assembler.SyncJournals());
  }
  producer.Publish(state);
  return work;
}

void FinishPipeline(Rank& producer, RankState& state, Registry& registry,
                    spdlog::logger& log) {
  RunPipeline(producer, state, registry, log, /*batch=*/0);
  (void)Finalise(producer, state, registry, log, End::kShutdown);
  producer.Publish(state);
}

}  // namespace tprobe::daemon
