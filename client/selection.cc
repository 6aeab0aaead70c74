#include "client/selection.h"

#include <algorithm>

#include "client/risk_level.h"

namespace tprobe::client {

namespace {

// Whether risk_level filters anything (msprobe applies it to PyTorch API
// calls at L1 and mix only).
bool RiskLevelFilters(const config::Config& config,
                      std::string_view framework) {
  return framework == "pytorch" && config.level != config::Level::kL0 &&
         config.risk_level != config::RiskLevel::kAll;
}

}  // namespace

bool Selection::Everything(const config::Config& config,
                           std::string_view framework) {
  return config.scope.empty() && config.list.empty() &&
         !RiskLevelFilters(config, framework);
}

Selection::Selection(const config::Config& config, std::string_view framework)
    : config_(config),
      data_mode_(config.data_mode),
      has_scope_(config.scope.size() == 2),
      by_risk_level_(!has_scope_ && config.list.empty()),
      risk_level_(RiskLevelFilters(config, framework)
                      ? config.risk_level
                      : config::RiskLevel::kAll),
      everything_(Everything(config, framework)),
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

bool Selection::Listed(const std::string& name) const {
  return list_.empty() ||
         std::any_of(list_.begin(), list_.end(), [&](const std::string& s) {
           return name.find(s) != std::string::npos;
         });
}

void Selection::BeginModule(const std::string& name) {
  if (kind_ == Kind::kApi) return;
  if (has_scope_ && name == scope_start_) in_scope_ = true;
  if (kind_ == Kind::kMix && !list_.empty() &&
      std::any_of(list_.begin(), list_.end(), [&](const std::string& s) {
        return name.find(s) != std::string::npos;
      })) {
    list_openers_.insert(name);
  }
}

void Selection::EndModule(const std::string& name) {
  if (kind_ == Kind::kApi) return;
  if (has_scope_ && name == scope_end_) in_scope_ = false;
  if (kind_ == Kind::kMix) list_openers_.erase(name);
}

bool Selection::Check(const std::string& name) {
  if (by_risk_level_) return PassesRiskLevel(risk_level_, name);
  if (kind_ == Kind::kModule) return in_scope_ && Listed(name);
  if (has_scope_ && name == scope_start_) in_scope_ = true;
  bool passes = false;
  if (!has_scope_ || in_scope_) {
    passes = (kind_ == Kind::kMix && !list_openers_.empty()) || Listed(name);
  }
  if (has_scope_ && name == scope_end_) in_scope_ = false;
  return passes;
}

bool Selection::ParamGrad(const std::string& module_base) {
  return Check(module_base) || backward_entries_.count(module_base) != 0;
}

void Selection::NoteBackwardEntry(const std::string& name) {
  // msprobe's name.rsplit(".", 2)[0]: the name without ".backward.N".
  size_t cut = name.rfind('.');
  if (cut != std::string::npos && cut > 0) cut = name.rfind('.', cut - 1);
  backward_entries_.insert(name.substr(0, cut));
}

void Selection::ResetStep() {
  in_scope_ = false;
  list_openers_.clear();
  backward_entries_.clear();
}

}  // namespace tprobe::client
