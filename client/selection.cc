#include "client/selection.h"

#include <algorithm>

namespace tprobe::client {

Selection::Selection(const config::Config& config)
    : config_(config),
      data_mode_(config.data_mode),
      mix_(config.level == config::Level::kMix),
      has_scope_(config.scope.size() == 2),
      everything_(!has_scope_ && config.list.empty()),
      list_(config.list) {
  if (has_scope_) {
    scope_start_ = config.scope[0];
    scope_end_ = config.scope[1];
  }
}

bool Selection::StepSelected(int64_t step) const {
  return config::StepSelected(config_, step);
}

bool Selection::RankSelected(int64_t rank) const {
  return config::RankSelected(config_, rank);
}

bool Selection::Listed(const std::string& name) const {
  return std::any_of(list_.begin(), list_.end(), [&](const std::string& s) {
    return name.find(s) != std::string::npos;
  });
}

bool Selection::Passes(const std::string& name) const {
  if (has_scope_ && !in_scope_) return false;
  if (!list_openers_.empty()) return true;
  return list_.empty() || Listed(name);
}

void Selection::OpenByName(const std::string& name, bool module) {
  if (has_scope_ && name == scope_start_) in_scope_ = true;
  if (module && mix_ && Listed(name)) list_openers_.push_back(name);
}

bool Selection::BeginModuleForward(std::string_view base,
                                   const std::string& name) {
  if (everything_) return true;
  OpenByName(name, /*module=*/true);
  const bool dumped = Passes(name);
  if (dumped) {
    dumped_forward_.insert(name);
    dumped_modules_.emplace(base);
  }
  return dumped;
}

bool Selection::BeginModuleBackward(const std::string& name,
                                    const std::string& forward_name) {
  if (everything_) return true;
  OpenByName(name, /*module=*/true);
  return dumped_forward_.count(forward_name) != 0 || Passes(name);
}

void Selection::EndModule(const std::string& name) {
  if (everything_) return;
  if (has_scope_ && name == scope_end_) in_scope_ = false;
  auto it = std::find(list_openers_.rbegin(), list_openers_.rend(), name);
  if (it != list_openers_.rend()) list_openers_.erase(std::next(it).base());
}

bool Selection::ApiForward(const std::string& name) {
  if (everything_) return true;
  OpenByName(name, /*module=*/false);
  const bool dumped = Passes(name);
  if (has_scope_ && name == scope_end_) in_scope_ = false;
  if (dumped) dumped_forward_.insert(name);
  return dumped;
}

bool Selection::ApiBackward(const std::string& name,
                            const std::string& forward_name) {
  if (everything_) return true;
  OpenByName(name, /*module=*/false);
  const bool dumped = dumped_forward_.count(forward_name) != 0 || Passes(name);
  if (has_scope_ && name == scope_end_) in_scope_ = false;
  return dumped;
}

bool Selection::ParamGrad(std::string_view module_base,
                          const std::string& name) {
  if (everything_) return true;
  return dumped_modules_.count(std::string(module_base)) != 0 || Passes(name);
}

void Selection::ResetStep() {
  in_scope_ = false;
  list_openers_.clear();
  dumped_forward_.clear();
  dumped_modules_.clear();
}

}  // namespace tprobe::client
