#ifndef TPROBE_TOOLS_COMPARE_MSPROBE_MSPROBE_DTYPES_H_
#define TPROBE_TOOLS_COMPARE_MSPROBE_MSPROBE_DTYPES_H_

// Which dtypes msprobe 26.x pairs as one row: row_compare.h refuses a pair
// of other dtypes, and msprobe_verdicts.h leaves it unjudged.
//
// Thread safety: a pure function.

#include <string>

namespace tprobe::compare {

// Whether msprobe pairs rows of these dtypes (equal, or both among
// float16, float32, float64 and bfloat16 of one framework's spelling, or
// a MindSpore and a PyTorch dtype of one family: CrossFrameworkDtypesMatch).
bool MsprobeDtypesMatch(const std::string& a, const std::string& b);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_MSPROBE_MSPROBE_DTYPES_H_
