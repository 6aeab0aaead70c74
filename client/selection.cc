#include "client/selection.h"

#include <algorithm>

#include "client/risk_level.h"

namespace tprobe::client {

namespace {

// Whether risk_level filters anything (msprobe applies it to PyTorch API
// calls at L1 and mix only).
bool RiskLevelFilters(const config::Config& config, bool risk_level_applies) {
  return risk_level_applies && config.level != config::Level::kL0 &&
         config.risk_level != config::RiskLevel::kAll;
}

}  // namespace

bool Selection::Everything(const config::Config& config,
                           bool risk_level_applies) {
  return config.scope.empty() && config.list.empty() &&
         !RiskLevelFilters(config, risk_level_applies);
}

Selection::Selection(const config::Config& config, bool risk_level_applies)
    : config_(config),
      data_mode_(config.data_mode),
      has_scope_(config.scope.size() == 2),
      by_risk_level_(!has_scope_ && config.list.empty()),
      risk_level_(RiskLevelFilters(config, risk_level_applies)
                      ? config.risk_level
                      : config::RiskLevel::kAll),
      everything_(Everything(config, risk_level_applies)),
      list_(config.list) {
  if (has_scope_) {
    scope_start_ = config.scope[0];
    scope_end_ = config.scope[1];
  }
  if (config.level == config::Level::kMix) {
    kind_ = Kind::kMix;
  } else if (has_scope_ && scope_start_.starts_with("Module.") &&
             scope_end_.starts_with("Module.")) {
    kind_ = Kind::kModule;
  }
}

bool Selection::StepSelected(int64_t step) const {
  return config::StepSelected(config_, step);
}

bool Selection::RankSelected(int64_t rank) const {
  return config::RankSelected(config_, rank);
}

bool Selection::Listed(std::string_view name) const {
  return list_.empty() ||
         std::any_of(list_.begin(), list_.end(), [&](const std::string& s) {
           return name.find(s) != std::string_view::npos;
         });
}

bool Selection::OpensListRange(std::string_view name) const {
  return kind_ == Kind::kMix && !list_.empty() && Listed(name);
}

// The range state is only ever read and written whole (a flag, a count), and
// nothing else is published through it: relaxed order is enough.
void Selection::BeginModule(std::string_view name) {
  if (kind_ == Kind::kApi) return;
  if (has_scope_ && name == scope_start_) {
    in_scope_.store(true, std::memory_order_relaxed);
  }
  if (OpensListRange(name)) {
    list_openers_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Selection::EndModule(std::string_view name) {
  if (kind_ == Kind::kApi) return;
  if (has_scope_ && name == scope_end_) {
    in_scope_.store(false, std::memory_order_relaxed);
  }
  if (OpensListRange(name)) {
    uint32_t open = list_openers_.load(std::memory_order_relaxed);
    while (open > 0 && !list_openers_.compare_exchange_weak(
                           open, open - 1, std::memory_order_relaxed)) {
    }
  }
}

bool Selection::Check(std::string_view name) {
  if (by_risk_level_) return PassesRiskLevel(risk_level_, name);
  if (kind_ == Kind::kModule) {
    return in_scope_.load(std::memory_order_relaxed) && Listed(name);
  }
  if (has_scope_ && name == scope_start_) {
    in_scope_.store(true, std::memory_order_relaxed);
  }
  bool passes = false;
  if (!has_scope_ || in_scope_.load(std::memory_order_relaxed)) {
    passes = (kind_ == Kind::kMix &&
              list_openers_.load(std::memory_order_relaxed) > 0) ||
             Listed(name);
  }
  if (has_scope_ && name == scope_end_) {
    in_scope_.store(false, std::memory_order_relaxed);
  }
  return passes;
}

bool Selection::ParamGrad(std::string_view module_base) {
  if (Check(module_base)) return true;
  const uint64_t word = backward_entries_.Find(module_base)
                            .value->load(std::memory_order_acquire);
  return step_word::Read(word, epoch_.load(std::memory_order_acquire)) != 0;
}

void Selection::NoteBackwardEntry(std::string_view name) {
  // msprobe's name.rsplit(".", 2)[0]: the name without ".backward.N".
  size_t cut = name.rfind('.');
  if (cut != std::string_view::npos && cut > 0) cut = name.rfind('.', cut - 1);
  backward_entries_.Find(name.substr(0, cut))
      .value->store((epoch_.load(std::memory_order_acquire) << 32) | 1,
                    std::memory_order_release);
}

void Selection::ResetStep() {
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  in_scope_.store(false, std::memory_order_relaxed);
  list_openers_.store(0, std::memory_order_relaxed);
}

}  // namespace tprobe::client
