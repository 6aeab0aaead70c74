#include "client/risk_level.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tprobe::client {
namespace {

// msprobe 26.2.0's CORE_API_SET, less the torch_npu and MindSpeed names
// (tprobe hooks no such group), with its distributed collectives. Sorted.
constexpr auto kCore =
    std::to_array<std::string_view>({"__matmul__",
                                     "_all_gather_base",
                                     "_batch_norm_impl_index",
                                     "_convolution",
                                     "_fused_adam_",
                                     "_fused_adamw_",
                                     "_reduce_scatter_base",
                                     "addbmm",
                                     "addbmm_",
                                     "addmm",
                                     "addmm_",
                                     "addmv",
                                     "addmv_",
                                     "addr",
                                     "addr_",
                                     "all_gather",
                                     "all_gather_into_tensor",
                                     "all_reduce",
                                     "all_to_all",
                                     "all_to_all_single",
                                     "baddbmm",
                                     "baddbmm_",
                                     "batch_isend_irecv",
                                     "batch_norm",
                                     "batch_norm_backward_elemt",
                                     "batch_norm_backward_reduce",
                                     "batch_norm_elemt",
                                     "batch_norm_gather_stats",
                                     "batch_norm_gather_stats_with_counts",
                                     "batch_norm_stats",
                                     "batch_norm_update_stats",
                                     "bilinear",
                                     "bmm",
                                     "broadcast",
                                     "chain_matmullinear",
                                     "conv1d",
                                     "conv2d",
                                     "conv3d",
                                     "conv_tbc",
                                     "conv_transpose1d",
                                     "conv_transpose2d",
                                     "conv_transpose3d",
                                     "convolution",
                                     "embedding",
                                     "embedding_bag",
                                     "gather",
                                     "group_norm",
                                     "instance_norm",
                                     "irecv",
                                     "isend",
                                     "layer_norm",
                                     "linalg.matmul",
                                     "linalg.multi_dot",
                                     "linalg.vecdot",
                                     "local_response_norm",
                                     "matmul",
                                     "mm",
                                     "multi_head_attention_forward",
                                     "mv",
                                     "recv",
                                     "reduce",
                                     "reduce_scatter",
                                     "reduce_scatter_tensor",
                                     "scaled_dot_product_attention",
                                     "scatter",
                                     "send"});

// msprobe 26.2.0's LOW_RISK_API_SET. Sorted.
constexpr auto kLow =
    std::to_array<std::string_view>({"__bool__",
                                     "align_as",
                                     "align_to",
                                     "arange",
                                     "atleast_1d",
                                     "atleast_2d",
                                     "atleast_3d",
                                     "bfloat16",
                                     "bool",
                                     "byte",
                                     "cat",
                                     "cfloat",
                                     "char",
                                     "chunk",
                                     "clamp",
                                     "clone",
                                     "column_stack",
                                     "concat",
                                     "concatenate",
                                     "diag",
                                     "diag_embed",
                                     "diagflat",
                                     "double",
                                     "dsplit",
                                     "dstack",
                                     "empty",
                                     "empty_like",
                                     "expand",
                                     "expand_as",
                                     "eye",
                                     "flatten",
                                     "float",
                                     "full",
                                     "full_like",
                                     "half",
                                     "hsplit",
                                     "hstack",
                                     "identity",
                                     "int",
                                     "linspace",
                                     "logspace",
                                     "long",
                                     "moveaxis",
                                     "movedim",
                                     "numpy",
                                     "ones",
                                     "ones_like",
                                     "permute",
                                     "ravel",
                                     "repeat",
                                     "repeat_interleave",
                                     "reshape",
                                     "reshape_as",
                                     "row_stack",
                                     "split",
                                     "split_with_sizes",
                                     "squeeze",
                                     "stack",
                                     "stride",
                                     "swapaxes",
                                     "swapdims",
                                     "tensor_split",
                                     "tile",
                                     "to",
                                     "transpose",
                                     "tril",
                                     "tril_indices",
                                     "triu",
                                     "triu_indices",
                                     "type_as",
                                     "unbind",
                                     "unflatten",
                                     "unfold",
                                     "unsafe_chunk",
                                     "unsafe_split",
                                     "unsafe_split_with_sizes",
                                     "unsqueeze",
                                     "view",
                                     "view_as",
                                     "vsplit",
                                     "vstack",
                                     "zeros",
                                     "zeros_like"});

// Every name of both lists with its risk, in an open-addressing table made
// at compile time: the filter asks once per API call, a lookup hashes the
// name once in place of two binary searches, and nothing is allocated
// (RiskOfApi cannot fail).
struct RiskSlot {
  std::string_view name;  // empty: a free slot
  ApiRisk risk = ApiRisk::kFocus;
};

constexpr size_t kRiskSlots = std::bit_ceil(2 * (kCore.size() + kLow.size()));

constexpr size_t SlotOf(std::string_view name) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return static_cast<size_t>(h) & (kRiskSlots - 1);
}

constexpr size_t NextSlot(size_t slot) { return (slot + 1) & (kRiskSlots - 1); }

constexpr auto kRisks = [] {
  std::array<RiskSlot, kRiskSlots> slots{};
  auto add = [&slots](std::string_view name, ApiRisk risk) {
    size_t i = SlotOf(name);
    while (!slots[i].name.empty()) i = NextSlot(i);
    slots[i] = {name, risk};
  };
  for (std::string_view name : kCore) add(name, ApiRisk::kCore);
  for (std::string_view name : kLow) add(name, ApiRisk::kLow);
  return slots;
}();

}  // namespace

ApiRisk RiskOfApi(std::string_view api) noexcept {
  // A name in both lists is found with the risk it was added with first.
  for (size_t i = SlotOf(api); !kRisks[i].name.empty(); i = NextSlot(i)) {
    if (kRisks[i].name == api) return kRisks[i].risk;
  }
  return ApiRisk::kFocus;
}

bool PassesRiskLevel(config::RiskLevel level, std::string_view name) {
  if (level == config::RiskLevel::kAll) return true;
  // msprobe's re.sub(r'\.\d+\.(forward|backward)$', '', name).
  for (std::string_view direction : {".forward", ".backward"}) {
    if (!name.ends_with(direction)) continue;
    std::string_view rest = name.substr(0, name.size() - direction.size());
    const size_t dot = rest.rfind('.');
    if (dot != std::string_view::npos && dot + 1 < rest.size() &&
        std::all_of(rest.begin() + dot + 1, rest.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
      name = rest.substr(0, dot);
    }
    break;
  }
  const size_t dot = name.find('.');
  const std::string_view prefix = name.substr(0, dot);
  if (prefix == "Module" || prefix == "Cell") return true;
  const ApiRisk risk =
      RiskOfApi(dot == std::string_view::npos ? name : name.substr(dot + 1));
  return level == config::RiskLevel::kCore ? risk == ApiRisk::kCore
                                           : risk != ApiRisk::kLow;
}

}  // namespace tprobe::client
