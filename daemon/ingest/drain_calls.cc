#include <algorithm>
#include <map>

#include "daemon/ingest/drainer.h"

namespace tprobe::daemon {

void Drainer::OnCall(RingState& ring, const record::CallView& v) {
  if (state_.overflow_limit_reached) return;  // the dump service ended
  const std::string* name = Name(v.call.name_id, v.call.step, "a call record");
  if (name == nullptr) return;
  const bool module =
      v.call.call_kind == static_cast<uint8_t>(record::CallKind::kModule);
  const bool group =
      v.call.call_kind == static_cast<uint8_t>(record::CallKind::kGroup);
  auto& open = ring.open_modules;
  const uint32_t step = v.call.step;
  auto same_step = [step](const RingState::OpenModule& m) {
    return m.step == step;
  };
  if (!v.begin) {
    ReleaseHeld(ring);
    auto it = std::find_if(open.rbegin(), open.rend(),
                           [&](const RingState::OpenModule& m) {
                             return m.step == step && m.name == *name;
                           });
    if (it != open.rend()) {
      // It and the calls of its step still open inside it are closed.
      open.erase(std::remove_if(std::prev(it.base()), open.end(), same_step),
                 open.end());
    }
    return;
  }
  if (state_.config.level != config::Level::kL1) {
    // A call's parent is of its own step: a call left open in an earlier
    // step is never the parent of a later one.
    std::optional<std::string> parent;
    auto it = std::find_if(open.rbegin(), open.rend(), same_step);
    if (it != open.rend() && !group) parent = it->name;
    if (module) {
      ring.held_nodes.push_back(
          HeldNode{v.call.step, *name, std::move(parent)});
    } else {
      if (dump::StepTree* tree = Tree(v.call.step, *name)) {
        state_.assembler.JournalOf(v.call.step)->Parent(*name, parent);
        tree->SetParent(*name, std::move(parent));
      }
      if (!group) ReleaseHeld(ring);
    }
  }
  if (module || group) open.push_back(RingState::OpenModule{step, *name});
}

void Drainer::ReleaseHeld(RingState& ring, uint32_t up_to_step) {
  auto held = ring.held_nodes.begin();
  for (; held != ring.held_nodes.end() && held->step <= up_to_step; ++held) {
    if (dump::StepTree* tree = Tree(held->step, held->name)) {
      state_.assembler.JournalOf(held->step)->Parent(held->name, held->parent);
      tree->SetParent(held->name, std::move(held->parent));
    }
  }
  ring.held_nodes.erase(ring.held_nodes.begin(), held);
}

void ReleaseHeldNodes(const Producer& producer, ProducerState& state,
                      spdlog::logger& log, uint32_t up_to_step) {
  Drainer drainer(producer, state, log);
  for (RingState& ring : state.rings) drainer.ReleaseHeld(ring, up_to_step);
}

void CloseOpenCalls(ProducerState& state, uint32_t up_to_step) {
  std::map<uint32_t, uint64_t> unclosed;  // by step
  for (RingState& ring : state.rings) {
    auto& open = ring.open_modules;
    auto ended = [up_to_step](const RingState::OpenModule& m) {
      return m.step <= up_to_step;
    };
    for (const RingState::OpenModule& m : open) {
      if (ended(m)) ++unclosed[m.step];
    }
    open.erase(std::remove_if(open.begin(), open.end(), ended), open.end());
  }
  for (const auto& [step, count] : unclosed) {
    state.assembler.NoteUnclosedCalls(step, count);
  }
}

}  // namespace tprobe::daemon
