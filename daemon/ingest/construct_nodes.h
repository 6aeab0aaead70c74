#ifndef TPROBE_DAEMON_INGEST_CONSTRUCT_NODES_H_
#define TPROBE_DAEMON_INGEST_CONSTRUCT_NODES_H_

// construct.json's nodes as a rank's Call records build them (drain.h,
// CallBegin / CallEnd): per ring, the module calls still open, whose
// innermost one of a step is the parent of the next node, and the module
// nodes held back until the next API node or CallEnd of their ring.
//
// Thread safety: none; part of RankState, guarded by the rank's
// mutex.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/record/codec.h"

namespace tprobe::daemon {

class ConstructNodes {
 public:
  // Puts node `name` of `step` into its tree with its parent.
  using Place = std::function<void(uint32_t step, const std::string& name,
                                   std::optional<std::string> parent)>;

  explicit ConstructNodes(size_t rings) : rings_(rings) {}

  // A CallBegin or CallEnd of ring `ring` for call `name`. `nodes`: the
  // level makes construct nodes (not L1); without it only the open calls
  // are tracked.
  void OnCall(uint32_t ring, const record::CallView& v, const std::string& name,
              bool nodes, const Place& place);

  // Places the ring's held module nodes of steps up to `up_to_step`, in
  // order; later steps' nodes stay held.
  void ReleaseHeld(uint32_t ring, uint32_t up_to_step, const Place& place);

  // Forgets the module calls of steps up to `up_to_step` still open on any
  // ring. Returns how many each such step had.
  std::map<uint32_t, uint64_t> CloseOpen(uint32_t up_to_step);

  size_t rings() const { return rings_.size(); }

 private:
  // A module's node whose CallBegin was seen but which is not in its tree
  // yet.
  struct HeldNode {
    uint32_t step;
    std::string name;
    std::optional<std::string> parent;
  };
  // A module (or group) call whose CallBegin was seen and CallEnd not yet.
  struct OpenCall {
    uint32_t step;
    std::string name;
  };
  struct Ring {
    std::vector<OpenCall> open;  // innermost last
    std::vector<HeldNode> held;  // in CallBegin order
  };

  std::vector<Ring> rings_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_CONSTRUCT_NODES_H_
