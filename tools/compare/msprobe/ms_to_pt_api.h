// msprobe 26.2's built-in MindSpore-to-PyTorch API table
// (msprobe/core/compare/ms_to_pt_api.yaml), which `compare -am` applies to
// a MindSpore row's API name after its Mint and MintFunctional rules:
// "Functional.add" pairs with "Torch.add". The data are msprobe's, copied
// line for line; tests/python/both/msprobe_mapping_test.py checks them
// against the installed msprobe's yaml.

#ifndef TPROBE_TOOLS_COMPARE_MSPROBE_MS_TO_PT_API_H_
#define TPROBE_TOOLS_COMPARE_MSPROBE_MS_TO_PT_API_H_

#include <optional>
#include <string_view>

namespace tprobe::compare {

// The PyTorch API that msprobe's table pairs with the MindSpore API
// `ms_api` (a class and a name, "Functional.add"), or nullopt when the
// table has no entry for it. The view points into static data.
// Thread safety: any thread may call it.
std::optional<std::string_view> MsToPtApi(std::string_view ms_api);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_MSPROBE_MS_TO_PT_API_H_
