#include "client/naming.h"

#include <algorithm>
#include <charconv>

#include "client/exception_boundary.h"

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
                       std::string_view class_name) noexcept try {
  std::string base;
  SetModuleBase(&base, style, path, class_name);
  return base;
} catch (...) {
  NoteStopped("ModuleBase");
  return {};
}

void SetApiBase(std::string* base, std::string_view prefix,
                std::string_view api) {
  const size_t dot = api.rfind('.');
  if (dot != std::string_view::npos) api.remove_prefix(dot + 1);
  base->reserve(prefix.size() + api.size() + 1);
  base->assign(prefix).append(".").append(api);
}

std::string ApiBase(std::string_view prefix, std::string_view api) noexcept
    try {
  std::string base;
  SetApiBase(&base, prefix, api);
  return base;
} catch (...) {
  NoteStopped("ApiBase");
  return {};
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
  // Written in one piece: it runs on every API call, and each append
  // checks the capacity again.
  char digits[10];
  const char* digits_end =
      std::to_chars(digits, digits + sizeof digits, index).ptr;
  const std::string_view number(digits, digits_end - digits);
  const std::string_view direction = forward ? ".forward" : ".backward";
  name->resize(base.size() + 1 + number.size() + direction.size());
  char* out = name->data();
  out = std::copy(base.begin(), base.end(), out);
  *out++ = '.';
  out = std::copy(number.begin(), number.end(), out);
  std::copy(direction.begin(), direction.end(), out);
}

std::string ApiCallName(std::string_view base, bool forward, uint32_t index) {
  std::string name;
  SetApiCallName(&name, base, forward, index);
  return name;
}

void SetParamGradName(std::string* name, std::string_view module_base,
                      uint32_t k) {
  name->reserve(module_base.size() + 28);
  name->assign(module_base).append(".parameters_grad.");
  AppendIndex(name, k);
}

std::string ParamGradName(std::string_view module_base, uint32_t k) {
  std::string name;
  SetParamGradName(&name, module_base, k);
  return name;
}

namespace step_word {

uint32_t Bump(std::atomic<uint64_t>& word, uint64_t epoch) {
  uint64_t v = word.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t next;
    uint32_t before;
    if ((v >> 32) >= epoch) {  // this step's (or, racing a Reset, the next)
      next = v + 1;
      before = static_cast<uint32_t>(v);
    } else {  // the first bump since the step began
      next = (epoch << 32) | 1;
      before = 0;
    }
    if (word.compare_exchange_weak(v, next, std::memory_order_relaxed)) {
      return before;
    }
  }
}

}  // namespace step_word

uint32_t CallIndices::ParamGrad(std::string_view module_base,
                                std::string_view param) {
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  const uint32_t id = params_.Find(param).id;
  Passes& passes = *passes_.Find(module_base).value;
  uint64_t first = passes.first.load(std::memory_order_acquire);
  while (step_word::Read(first, epoch) == 0) {
    // The module's first gradient of the step: its parameter marks passes.
    if (passes.first.compare_exchange_weak(first, (epoch << 32) | id,
                                           std::memory_order_acq_rel,
                                           std::memory_order_acquire)) {
      return 0;
    }
  }
  if (static_cast<uint32_t>(first) == id) {
    return step_word::Bump(passes.k, epoch) + 1;  // a new pass begins
  }
  return step_word::Read(passes.k.load(std::memory_order_acquire), epoch);
}

uint32_t CallIndices::NextParamGradPass(std::string_view module_base) {
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  Passes& passes = *passes_.Find(module_base).value;
  if (step_word::Read(passes.first.load(std::memory_order_acquire), epoch) ==
      0) {
    return 0;
  }
  return step_word::Read(passes.k.load(std::memory_order_acquire), epoch) + 1;
}

void CallIndices::Reset() {
  modules_.Reset();
  apis_.Reset();
  epoch_.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace tprobe::client
