#include "client/naming.h"

#include <charconv>

namespace tprobe::client {
namespace {

void AppendIndex(std::string* out, uint32_t index) {
  char digits[10];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, index);
  out->append(digits, end);
}

}  // namespace

void SetModuleBase(std::string* base, ModuleStyle style, std::string_view path,
                   std::string_view class_name) {
  const std::string_view start =
      style == ModuleStyle::kCell ? "Cell." : "Module.";
  base->reserve(start.size() + path.size() + class_name.size() + 1);
  base->assign(start).append(path).append(".").append(class_name);
}

std::string ModuleBase(ModuleStyle style, std::string_view path,
                       std::string_view class_name) {
  std::string base;
  SetModuleBase(&base, style, path, class_name);
  return base;
}

void SetApiBase(std::string* base, std::string_view prefix,
                std::string_view api) {
  const size_t dot = api.rfind('.');
  if (dot != std::string_view::npos) api.remove_prefix(dot + 1);
  base->reserve(prefix.size() + api.size() + 1);
  base->assign(prefix).append(".").append(api);
}

std::string ApiBase(std::string_view prefix, std::string_view api) {
  std::string base;
  SetApiBase(&base, prefix, api);
  return base;
}

void SetModuleCallName(std::string* name, std::string_view base, bool forward,
                       uint32_t index) {
  name->reserve(base.size() + 20);
  name->assign(base).append(forward ? ".forward." : ".backward.");
  AppendIndex(name, index);
}

std::string ModuleCallName(std::string_view base, bool forward,
                           uint32_t index) {
  std::string name;
  SetModuleCallName(&name, base, forward, index);
  return name;
}

void SetApiCallName(std::string* name, std::string_view base, bool forward,
                    uint32_t index) {
  name->reserve(base.size() + 20);
  name->assign(base).append(".");
  AppendIndex(name, index);
  name->append(forward ? ".forward" : ".backward");
}

std::string ApiCallName(std::string_view base, bool forward, uint32_t index) {
  std::string name;
  SetApiCallName(&name, base, forward, index);
  return name;
}

std::string ParamGradName(std::string_view module_base, uint32_t k) {
  std::string name;
  name.reserve(module_base.size() + 28);
  name.append(module_base).append(".parameters_grad.");
  AppendIndex(&name, k);
  return name;
}

StepCounters::StepCounters() : slots_(std::make_unique<Slot[]>(kSlots)) {}

StepCounters::~StepCounters() {
  for (size_t i = 0; i < kSlots; ++i) {
    delete slots_[i].key.load(std::memory_order_relaxed);
  }
}

uint32_t StepCounters::Bump(std::atomic<uint64_t>& count) const {
  uint64_t v = count.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t epoch = epoch_.load(std::memory_order_acquire);
    uint64_t next;
    uint32_t index;
    if ((v >> 32) >= epoch) {  // this step's (or, racing a Reset, the next)
      next = v + 1;
      index = static_cast<uint32_t>(v);
    } else {  // the first call since the step began
      next = (epoch << 32) | 1;
      index = 0;
    }
    if (count.compare_exchange_weak(v, next, std::memory_order_relaxed)) {
      return index;
    }
  }
}

uint32_t StepCounters::Next(std::string_view base) {
  const size_t hash = std::hash<std::string_view>{}(base);
  for (size_t i = 0; i < kMaxProbe; ++i) {
    Slot& slot = slots_[(hash + i) & (kSlots - 1)];
    const Key* key = slot.key.load(std::memory_order_acquire);
    if (key == nullptr) {
      // Threads probe in the same order and a slot never empties again, so
      // a base is claimed at most once: the loser of this race finds the
      // winner's key (possibly its own base) in the slot.
      auto fresh = std::make_unique<Key>(Key{hash, std::string(base)});
      if (slot.key.compare_exchange_strong(key, fresh.get(),
                                           std::memory_order_acq_rel,
                                           std::memory_order_acquire)) {
        key = fresh.release();
      }
    }
    if (key->hash == hash && key->text == base) return Bump(slot.count);
  }
  std::atomic<uint64_t>* count;
  {
    std::lock_guard lock(overflow_mu_);
    auto it = overflow_.find(base);
    if (it == overflow_.end()) {
      it = overflow_
               .emplace(std::string(base),
                        std::make_unique<std::atomic<uint64_t>>(0))
               .first;
    }
    count = it->second.get();
  }
  return Bump(*count);
}

uint32_t CallIndices::ParamGrad(std::string_view module_base,
                                std::string_view param) {
  auto it = passes_.find(module_base);
  if (it == passes_.end()) {
    passes_.emplace(std::string(module_base), Passes{0, std::string(param)});
    return 0;
  }
  if (it->second.first_param == param) ++it->second.k;
  return it->second.k;
}

void CallIndices::Reset() {
  modules_.Reset();
  apis_.Reset();
  passes_.clear();
}

}  // namespace tprobe::client
