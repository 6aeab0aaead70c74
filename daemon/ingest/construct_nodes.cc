// construct.json's nodes from Call records (construct_nodes.h).

#include "daemon/ingest/construct_nodes.h"

#include <algorithm>

namespace tprobe::daemon {

void ConstructNodes::OnCall(uint32_t ring_index, const record::CallView& v,
                            const std::string& name, bool nodes,
                            const Place& place) {
  const bool module =
      v.call.call_kind == static_cast<uint8_t>(record::CallKind::kModule);
  const bool group =
      v.call.call_kind == static_cast<uint8_t>(record::CallKind::kGroup);
  auto& open = rings_[ring_index].open;
  const uint32_t step = v.call.step;
  auto same_step = [step](const OpenCall& m) { return m.step == step; };
  if (!v.begin) {
    ReleaseHeld(ring_index, UINT32_MAX, place);
    auto it = std::find_if(open.rbegin(), open.rend(), [&](const OpenCall& m) {
      return m.step == step && m.name == name;
    });
    if (it != open.rend()) {
      // It and the calls of its step still open inside it are closed.
      open.erase(std::remove_if(std::prev(it.base()), open.end(), same_step),
                 open.end());
    }
    return;
  }
  if (nodes) {
    // A call's parent is of its own step: a call left open in an earlier
    // step is never the parent of a later one.
    std::optional<std::string> parent;
    auto it = std::find_if(open.rbegin(), open.rend(), same_step);
    if (it != open.rend() && !group) parent = it->name;
    if (module) {
      rings_[ring_index].held.push_back(
          HeldNode{step, name, std::move(parent)});
    } else {
      place(step, name, std::move(parent));
      if (!group) ReleaseHeld(ring_index, UINT32_MAX, place);
    }
  }
  if (module || group) open.push_back(OpenCall{step, name});
}

void ConstructNodes::ReleaseHeld(uint32_t ring_index, uint32_t up_to_step,
                                 const Place& place) {
  auto& held = rings_[ring_index].held;
  auto it = held.begin();
  for (; it != held.end() && it->step <= up_to_step; ++it) {
    place(it->step, it->name, std::move(it->parent));
  }
  held.erase(held.begin(), it);
}

std::map<uint32_t, uint64_t> ConstructNodes::CloseOpen(uint32_t up_to_step) {
  std::map<uint32_t, uint64_t> unclosed;  // by step
  auto ended = [up_to_step](const OpenCall& m) { return m.step <= up_to_step; };
  for (Ring& ring : rings_) {
    for (const OpenCall& m : ring.open) {
      if (ended(m)) ++unclosed[m.step];
    }
    ring.open.erase(std::remove_if(ring.open.begin(), ring.open.end(), ended),
                    ring.open.end());
  }
  return unclosed;
}

}  // namespace tprobe::daemon
