// A rank's Start, Step or Goodbye as a command (command.h).

#include "daemon/ingest/command.h"

namespace tprobe::daemon {
namespace {

// tprobe.json's why_empty for a rank's cause; empty for none, and for a
// value this daemon does not know (that rank's tree then says nothing).
std::string WhyEmptyCode(int cause) {
  if (!v1::EmptyCause_IsValid(cause)) return "";
  switch (static_cast<v1::EmptyCause>(cause)) {
    case v1::EMPTY_CAUSE_SCOPE_LIST:
      return "scope_list";
    case v1::EMPTY_CAUSE_RISK_LEVEL:
      return "risk_level";
    case v1::EMPTY_CAUSE_NO_MODEL:
      return "no_model";
    case v1::EMPTY_CAUSE_NO_API:
      return "no_api";
    case v1::EMPTY_CAUSE_NO_CALLS:
      return "no_calls";
    default:
      return "";
  }
}

}  // namespace

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
      command.why_empty = WhyEmptyCode(request.step().why_empty());
      if (request.step().has_ledger()) command.ledger = request.step().ledger();
      if (request.step().has_outage()) command.outage = request.step().outage();
      break;
    case v1::Request::kGoodbye:
      command.kind = Command::Kind::kGoodbye;
      command.dropped_no_daemon = request.goodbye().dropped_no_daemon();
      command.why_empty = WhyEmptyCode(request.goodbye().why_empty());
      if (request.goodbye().has_ledger()) {
        command.ledger = request.goodbye().ledger();
      }
      // The step the goodbye is about, if any.
      if (command.ledger || !command.why_empty.empty()) {
        command.step = request.goodbye().step();
      }
      break;
    default:
      break;
  }
  return command;
}

}  // namespace tprobe::daemon
