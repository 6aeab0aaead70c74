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
// Thread safety: the functions are pure. CallIndices is not thread-safe; the
// Session guards it.

#include <cstdint>
#include <functional>
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

// "{base}.forward.{index}" or "{base}.backward.{index}".
TPROBE_INTERNAL std::string ModuleCallName(std::string_view base, bool forward,
                                           uint32_t index);

// "{base}.{index}.forward" or "{base}.{index}.backward".
std::string ApiCallName(std::string_view base, bool forward, uint32_t index);

// "{module_base}.parameters_grad.{k}".
std::string ParamGradName(std::string_view module_base, uint32_t k);

// The call counters of one step.
class CallIndices {
 public:
  // The index of the next forward call of a module (API) with this base: 0
  // for the first call of the step, then 1, 2, …
  uint32_t NextModule(std::string_view base) { return Next(modules_, base); }
  uint32_t NextApi(std::string_view base) { return Next(apis_, base); }

  // K of a parameter gradient of the module with `module_base`: the number
  // of backward passes through the module before this one in the step. A
  // pass is counted each time the first parameter that got a gradient in
  // the step gets another, so all parameters of one pass share K.
  uint32_t ParamGrad(std::string_view module_base, std::string_view param);

  // Forgets every count (at step()).
  void Reset();

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>{}(s);
    }
  };
  template <typename V>
  using Map = std::unordered_map<std::string, V, Hash, std::equal_to<>>;

  static uint32_t Next(Map<uint32_t>& map, std::string_view base);

  struct Passes {
    uint32_t k = 0;
    std::string first_param;
  };
  Map<uint32_t> modules_;
  Map<uint32_t> apis_;
  Map<Passes> passes_;
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_NAMING_H_
