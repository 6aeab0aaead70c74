// Which dtypes msprobe pairs (msprobe_dtypes.h).

#include "tools/compare/msprobe/msprobe_dtypes.h"

#include <string_view>

#include "tools/compare/msprobe/msprobe_mapping.h"

namespace tprobe::compare {

bool MsprobeDtypesMatch(const std::string& a, const std::string& b) {
  if (a == b || CrossFrameworkDtypesMatch(a, b)) return true;
  auto in = [](const std::string& d, std::string_view prefix) {
    for (std::string_view name :
         {"float16", "float32", "float64", "bfloat16"}) {
      if (d.size() == prefix.size() + name.size() && d.starts_with(prefix) &&
          std::string_view(d).substr(prefix.size()) == name) {
        return true;
      }
    }
    return false;
  };
  auto ms = [](const std::string& d) {
    return d == "Float16" || d == "Float32" || d == "Float64" ||
           d == "BFloat16";
  };
  return (in(a, "torch.") && in(b, "torch.")) || (ms(a) && ms(b));
}

}  // namespace tprobe::compare
