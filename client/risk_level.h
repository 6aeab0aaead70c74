#ifndef TPROBE_CLIENT_RISK_LEVEL_H_
#define TPROBE_CLIENT_RISK_LEVEL_H_

// msprobe 26.x's risk_level for PyTorch APIs (its api_risk_level.py and
// DataCollector._should_collect_by_risk_level): at levels L1 and mix, when
// the config gives neither scope nor list, an API call's data is dumped
// only when its risk passes the level:
//
//   ALL    every API
//   FOCUS  every API but the low-risk ones (views, reshapes, casts, tensor
//          factories, concatenation and splitting, clone, stride, ...);
//          msprobe's default
//   CORE   only the core APIs (matrix products, convolutions, norms,
//          embedding, attention, the torch.distributed collectives)
//
// The risk is that of the API name after its group prefix ("view" of
// "Tensor.view.3.forward", "linalg.matmul" of "Torch.linalg.matmul.0.
// forward"); module calls ("Module.*") always pass. A call that does not
// pass is still counted, named and (at mix) a construct.json node: only its
// data and stack are left out, as with scope and list. The name lists are
// the installed msprobe's facts (tests/python/pytorch/api_parity_test.py checks
// every hooked name against it). One quirk is kept: msprobe 26.2.0's core
// list joins "chain_matmul" "linear" into one string, so Functional.linear
// is FOCUS, not CORE.
//
// Thread safety: pure functions.

#include <string_view>

#include "common/config/config.h"
#include "common/internal_api.h"

namespace tprobe::client {

enum class ApiRisk { kCore, kFocus, kLow };

// The risk of the API `api` (the name after the group prefix).
TPROBE_INTERNAL ApiRisk RiskOfApi(std::string_view api) noexcept;

// Whether the call named `name` ("{Prefix}.{api}.{N}.{forward|backward}",
// or a module name) is dumped at `level`.
bool PassesRiskLevel(config::RiskLevel level, std::string_view name);

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_RISK_LEVEL_H_
