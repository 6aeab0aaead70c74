#ifndef TPROBE_CLIENT_NAMING_H_
#define TPROBE_CLIENT_NAMING_H_

// msprobe's entry names (reference/msprobe-format.md, section 3) and the
// per-step call indices in them:
//
//   API call         {Prefix}.{api}.{N}.forward | backward
//   module call      Module.{path}.{Class}.forward | backward.{N}
//   MindSpore cell   Cell.{path}.{Class}.forward | backward.{N}
//   parameter grads  Module.{path}.{Class}.parameters_grad.{K}
//
// A "base" is the name without direction and index: "Functional.relu",
// "Module.layer1.0.conv1.Conv2d". Adapters build a base once per hooked
// object and pass it on every call, so the hot path only appends.
//
// Indices count calls per base and start at 0 in every step; a backward
// call reuses its forward call's index, so only forward calls count.
//
// Thread safety: the functions are pure. CallIndices: see the class.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/internal_api.h"

namespace tprobe::client {

// How module names start: PyTorch's "Module." or MindSpore's "Cell.".
enum class ModuleStyle : uint8_t { kModule = 0, kCell = 1 };

// "Module.{path}.{class_name}" (or "Cell.…"). The root model is never
// named: msprobe skips it, and so must the adapter.
TPROBE_INTERNAL std::string ModuleBase(ModuleStyle style, std::string_view path,
                                       std::string_view class_name);

// "{prefix}.{last dotted part of api}": "Torch" + "linalg.norm" gives
// "Torch.norm" (msprobe names an API by its last component, so such APIs
// share one counter).
TPROBE_INTERNAL std::string ApiBase(std::string_view prefix,
                                    std::string_view api);

// The same two into *base, reusing its capacity (the C++ Client, which gets
// path and class on every call: warm, no allocation).
void SetModuleBase(std::string* base, ModuleStyle style, std::string_view path,
                   std::string_view class_name);
void SetApiBase(std::string* base, std::string_view prefix,
                std::string_view api);

// "{base}.forward.{index}" or "{base}.backward.{index}".
TPROBE_INTERNAL std::string ModuleCallName(std::string_view base, bool forward,
                                           uint32_t index);
// The same into *name, reusing its capacity (a hook's plan, warm: no
// allocation).
void SetModuleCallName(std::string* name, std::string_view base, bool forward,
                       uint32_t index);

// "{base}.{index}.forward" or "{base}.{index}.backward".
std::string ApiCallName(std::string_view base, bool forward, uint32_t index);
void SetApiCallName(std::string* name, std::string_view base, bool forward,
                    uint32_t index);

// "{module_base}.parameters_grad.{k}".
std::string ParamGradName(std::string_view module_base, uint32_t k);

// A map from text that finds a key by string_view (a hit allocates nothing).
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>{}(s);
  }
};
template <typename V>
using TextMap = std::unordered_map<std::string, V, TextHash, std::equal_to<>>;

// One counter per base text that starts again at 0 every step, without a
// lock: a fixed open-addressing table whose slots, once given a base, keep
// it for good (the base is copied once, the first time it is seen; a warm
// count allocates nothing), each slot's count tagged with the step epoch it
// counts in. A count from an older epoch starts again at 0. Bases beyond
// the table's room fall back to a map under a mutex.
//
// Thread safety: Next and Reset may be called from any thread at the same
// time. A Next concurrent with Reset counts in either step.
class StepCounters {
 public:
  StepCounters();
  ~StepCounters();
  StepCounters(const StepCounters&) = delete;
  StepCounters& operator=(const StepCounters&) = delete;

  // 0 for the first call of `base` in the step, then 1, 2, …
  uint32_t Next(std::string_view base);
  void Reset() { epoch_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  struct Key {
    size_t hash;
    std::string text;
  };
  struct Slot {
    std::atomic<const Key*> key{nullptr};
    // (epoch << 32) | calls counted in that epoch.
    std::atomic<uint64_t> count{0};
  };
  static constexpr size_t kSlots = size_t{1} << 13;
  static constexpr size_t kMaxProbe = 32;
  uint32_t Bump(std::atomic<uint64_t>& count) const;

  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> epoch_{1};
  std::mutex overflow_mu_;  // guards overflow_
  TextMap<std::unique_ptr<std::atomic<uint64_t>>> overflow_;
};

// The call counters of one step.
//
// Thread safety: NextModule and NextApi may be called from any thread,
// concurrently with each other and with Reset (StepCounters); ParamGrad and
// Reset need the caller's lock (the Session's).
class CallIndices {
 public:
  // The index of the next forward call of a module (API) with this base: 0
  // for the first call of the step, then 1, 2, …
  uint32_t NextModule(std::string_view base) { return modules_.Next(base); }
  uint32_t NextApi(std::string_view base) { return apis_.Next(base); }

  // K of a parameter gradient of the module with `module_base`: the number
  // of backward passes through the module before this one in the step. A
  // pass is counted each time the first parameter that got a gradient in
  // the step gets another, so all parameters of one pass share K.
  uint32_t ParamGrad(std::string_view module_base, std::string_view param);

  // Forgets every count (at step()).
  void Reset();

 private:
  struct Passes {
    uint32_t k = 0;
    std::string first_param;
  };
  StepCounters modules_;
  StepCounters apis_;
  TextMap<Passes> passes_;
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_NAMING_H_
