#include "daemon/ingest/command.h"

namespace tprobe::daemon {

Command RankCommand(const v1::Request& request) {
  Command command;
  switch (request.body_case()) {
    case v1::Request::kStart:
      command.kind = Command::Kind::kStart;
      command.step = request.start().step();
      break;
    case v1::Request::kStep:
      command.kind = Command::Kind::kStep;
      command.step = request.step().step();
      command.unclosed_calls = request.step().unclosed_calls();
      if (request.step().has_ledger()) command.ledger = request.step().ledger();
      if (request.step().has_outage()) command.outage = request.step().outage();
      break;
    case v1::Request::kGoodbye:
      command.kind = Command::Kind::kGoodbye;
      command.dropped_no_daemon = request.goodbye().dropped_no_daemon();
      if (request.goodbye().has_ledger()) {
        command.ledger = request.goodbye().ledger();
        command.step = request.goodbye().step();
      }
      break;
    default:
      break;
  }
  return command;
}

}  // namespace tprobe::daemon
