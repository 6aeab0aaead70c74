#include "client/step_ledger.h"

#include <algorithm>

#include "common/record_losses.h"

namespace tprobe::client {

void StepLedger::NoteLostEntry(std::string_view name) {
  std::lock_guard lock(mu_);
  ++lost_;
  if (lost_names_.size() < kMaxNames) lost_names_.emplace_back(name);
}

v1::StepLedger StepLedger::Close(uint32_t step, const RecordTotals& now,
                                 std::optional<uint32_t> first_unacknowledged) {
  v1::StepLedger l;
  const uint64_t produced = now.produced() - last_.produced();
  uint64_t committed = 0;
  if (now.active_generation != 0) {
    const bool same = now.active_generation == last_.active_generation &&
                      now.active_rings.size() == last_.active_rings.size();
    for (size_t i = 0; i < now.active_rings.size(); ++i) {
      committed += now.active_rings[i] - (same ? last_.active_rings[i] : 0);
      l.add_ring_cuts(now.active_rings[i]);
    }
  }
  const RankLosses rank = now.dropped - last_.dropped;
  // Committed during the step to a connection that is gone now.
  const uint64_t elsewhere =
      produced - std::min(produced, committed + rank.Total());
  orphaned_due_ += now.orphaned - last_.orphaned;
  const uint64_t gone = std::min(orphaned_due_, elsewhere);
  orphaned_due_ -= gone;
  const StepLosses dropped{.ring_full = rank.ring_full,
                           .too_large = rank.too_large,
                           .no_daemon = rank.no_daemon,
                           .daemon_gone = gone};
  l.set_produced(produced);
  l.set_committed(committed);
#define TPROBE_SET_(name) l.set_dropped_##name(dropped.name);
  TPROBE_STEP_LOSSES(TPROBE_SET_)
#undef TPROBE_SET_
  l.set_read_by_lost_daemon(elsewhere - gone);
  {
    std::lock_guard lock(mu_);
    l.set_entries_lost(lost_);
    for (std::string& name : lost_names_) l.add_lost_entries(std::move(name));
    lost_ = 0;
    lost_names_.clear();
  }
  last_ = now;
  if (dropped.no_daemon + elsewhere > 0) {
    if (!outage_) {
      outage_.emplace();
      outage_->set_first_step(
          std::min(step, first_unacknowledged.value_or(step)));
    }
    outage_->set_last_step(step);
    outage_->set_produced(outage_->produced() + produced);
#define TPROBE_ADD_(name) \
  outage_->set_dropped_##name(outage_->dropped_##name() + dropped.name);
    TPROBE_STEP_LOSSES(TPROBE_ADD_)
#undef TPROBE_ADD_
    outage_->set_read_by_lost_daemon(outage_->read_by_lost_daemon() +
                                     elsewhere - gone);
  }
  return l;
}

std::optional<v1::Outage> StepLedger::TakeOutage() {
  std::optional<v1::Outage> o;
  o.swap(outage_);
  return o;
}

}  // namespace tprobe::client
