#include "daemon/ingest/rank_pipeline.h"

#include <algorithm>

#include "daemon/ingest/drain.h"
#include "daemon/ingest/step_accounting.h"

namespace tprobe::daemon {
namespace {

constexpr size_t kCommandsPerPass = 64;

void LogWriteError(const Producer& p, ProducerState& state, spdlog::logger& log,
                   const Status& s) {
  if (s.ok()) return;
  std::string error = std::string(kWriteErrorPrefix) + s.message();
  if (error == state.last_error) return;  // logged once
  state.last_error = std::move(error);
  log.error("client {} (pid {}, rank {}): {}", p.client_id(), p.pid(), p.rank(),
            s.message());
}

// Drains everything committed, writes every tree, and forgets the producer.
// `ledger`: the rank's count of `ledger_step` (Goodbye); without it the
// step in progress is settled from the daemon's count.
Status Finalise(Producer& p, ProducerState& state, Registry& registry,
                spdlog::logger& log, bool died,
                const v1::StepLedger* ledger = nullptr,
                uint32_t ledger_step = 0) {
  if (state.closed) return Status::Ok();
  DrainCommitted(p, state, log);
  ReleaseHeldEntries(p, state, log, UINT32_MAX);
  ReleaseHeldNodes(p, state, log);
  CloseOpenCalls(state);
  if (ledger) {
    SettleStep(state, ledger_step, *ledger);
  } else {
    SettleOpenStep(state);
  }
  ReleaseSettledTensors(p, state, log);
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
  // Commands queued after the end (a CLI flush) have nothing left to do.
  for (Command& c : p.CloseQueue()) {
    if (c.done) c.done(Status::Ok());
  }
  return s;
}

Status RunCommand(Producer& p, ProducerState& state, Registry& registry,
                  spdlog::logger& log, const Command& c) {
  if (state.closed) return Status::Ok();
  // A command reads the records of the steps it is about past the
  // open-step bound; a Configure, those made under the old config.
  std::optional<uint32_t> through = c.step;
  if (c.kind == Command::Kind::kConfigure) {
    through = c.step > 0 ? std::optional<uint32_t>(c.step - 1) : std::nullopt;
  }
  DrainTo(p, state, c.targets, log, through);
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
      state.dropped_no_daemon =
          std::max(state.dropped_no_daemon, c.dropped_no_daemon);
      log.info("client {} (pid {}, rank {}) said goodbye", p.client_id(),
               p.pid(), p.rank());
      return Finalise(p, state, registry, log, /*died=*/false,
                      c.ledger ? &*c.ledger : nullptr, c.step);
    case Command::Kind::kConfigure: {
      // The client records step c.step on under the new config; what was
      // drained before it was made under the old one.
      state.config = *c.config;
      AssemblerOptions capture;
      SetCaptureOptions(state.config, &capture);
      state.assembler.SetCapture(capture);
      // A new config starts the dump afresh, overflow_nums included.
      state.overflows_dumped = 0;
      state.overflow_limit_reached = false;
      log.info(
          "client {} (pid {}, rank {}) records step {} on under a new "
          "config: task {}, level {}",
          p.client_id(), p.pid(), p.rank(), c.step, capture.task,
          capture.level);
      break;
    }
    case Command::Kind::kHangUp:
      state.hung_up = true;
      log.info(
          "client {} (pid {}, rank {}) hung up without Goodbye; its steps "
          "are finalised as producer_died once the process is gone",
          p.client_id(), p.pid(), p.rank());
      break;
  }
  LogWriteError(p, state, log, s);
  return s;
}

}  // namespace

size_t RunPipeline(Producer& producer, ProducerState& state, Registry& registry,
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
  if (!state.closed) work += DrainSome(producer, state, batch, log);
  if (state.hung_up && !state.closed && producer.ProcessGone()) {
    log.warn(
        "client {} (pid {}, rank {}) died: its open steps are finalised as "
        "incomplete (producer_died)",
        producer.client_id(), producer.pid(), producer.rank());
    (void)Finalise(producer, state, registry, log, /*died=*/true);
    ++work;
  }
  if (!state.closed) {
    LogWriteError(producer, state, log, state.assembler.SyncJournals());
  }
  producer.Publish(state);
  return work;
}

void FinishPipeline(Producer& producer, ProducerState& state,
                    Registry& registry, spdlog::logger& log) {
  RunPipeline(producer, state, registry, log, /*batch=*/0);
  (void)Finalise(producer, state, registry, log, /*died=*/false);
  producer.Publish(state);
}

}  // namespace tprobe::daemon
