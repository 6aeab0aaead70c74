#ifndef TPROBE_CLIENT_CALL_PLAN_H_
#define TPROBE_CLIENT_CALL_PLAN_H_

// What the session (session.h) decided for one call: its name and index,
// its step, and which of its data the adapter hands over. The session fills
// it in Begin*; the entry builder (entry_builder.h) lays an entry out from
// it; neither needs the other to read it.

#include <cstdint>
#include <string>

#include "common/record/record.h"

namespace tprobe::client {

// What the session decided for one call.
struct CallPlan {
  std::string name;      // the full entry name
  uint32_t index = 0;    // N in the name (a backward call's is its forward's)
  uint32_t step = 0;     // the step the call belongs to
  uint32_t name_id = 0;  // the interned name; 0 when nothing is sent
  record::CallKind kind = record::CallKind::kModule;
  bool forward = true;
  bool construct = false;  // a CallBegin was written; EndCall closes it
  // Passed scope and list when it began (a backward module call: when it
  // ended, see CheckEnd).
  bool dumped = false;
  // data_mode keeps the call's inputs, and it passed scope and list when it
  // began.
  bool input = false;
  // data_mode keeps the call's outputs and they may be dumped: for a forward
  // call this is settled by CheckEnd (scope and list are checked again when
  // the call ends, as msprobe does).
  bool output = false;
  // Whether the adapter should hand over the call's data: an entry may be
  // written, with the data that input and output say.
  bool entry() const { return name_id != 0 && (input || output); }
  // Whether the call's stack goes into stack.json: a forward call that
  // passed scope and list when it began, whatever data_mode keeps.
  bool stack() const { return forward && dumped && name_id != 0; }
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_CALL_PLAN_H_
