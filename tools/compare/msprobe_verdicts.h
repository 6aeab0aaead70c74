#ifndef TPROBE_TOOLS_COMPARE_MSPROBE_VERDICTS_H_
#define TPROBE_TOOLS_COMPARE_MSPROBE_VERDICTS_H_

// msprobe 26.x's verdicts: its per-API indicator checks (msprobe's
// compare/indicator_analysis; the rules, not its code), run over the rows
// of one pair after row_compare.h has measured them.
//
// The rows of one dump.json entry (an API or module call) are judged
// together. Its input rows are those without ".output." in the name
// (inputs, parameters, gradients), the rest its outputs. A row passes
// unless a check raises it to warning or error (the worst one wins):
//
//   statistics
//     error    the target's Max or Min is NaN or +-inf and the baseline's
//              are not
//     error    every input's NormRelativeErr is below 10 % and an
//              output's is above 50 % (an "inf" cell, where the baseline's
//              norm is 0, is above)
//     error    Requires_grad differs (True, False or none)
//     error    a scalar input (a non-tensor value) differs
//     error    the dtypes differ (float16 against float32 too)
//     warning  the first output row, when the outputs' largest
//              NormRelativeErr is over 10 times the inputs' largest (over
//              10 % when the inputs' is 0)
//   tensor     the NaN/inf, Requires_grad, scalar and dtype errors, and
//     error    the first output row, when every input's One Thousandth
//              Err Ratio is over 0.9 and an output's under 0.1
//     warning  the first output row, when every input's Cosine is over
//              0.9 and the smallest output Cosine is 0.1 or more lower
//   md5, xor
//     error    the checksums differ (warning against no baseline row)
//
// Calls to empty, empty_like, numpy, to, __setitem__, empty_with_format,
// new_empty_strided, new_empty and empty_strided are not judged; for
// _reduce_scatter_base, _all_gather_base, all_to_all_single and
// batch_isend_irecv only the outputs are.
//
// Rows msprobe would not pair (a shape or a dtype outside msprobe's
// float16/32/64/bfloat16 group on the other side, a tensor against a
// value) keep row_compare.h's error, and rows on one side only stay
// missing or extra. Err_message becomes msprobe's JSON list of messages;
// tprobe's own notes (a tensor compared by its statistics, a pair of two
// tasks) are appended to it.
//
// `strict` (--strict-verdicts) keeps, besides msprobe's, row_compare.h's
// verdict where it is worse: a difference of any statistic over half the
// larger value, a tensor-mode
// Cosine < 0.99 with MaxAbsErr > 0.001 (msprobe 8.3.3's "Accuracy Reached
// or Not"), and a NaN or inf on the baseline's side only.
//
// Thread safety: ApplyMsprobeVerdicts may be called concurrently for
// different `rows`.

#include <string>
#include <vector>

#include "tools/compare/input/dump_rows.h"
#include "tools/compare/row_compare.h"

namespace tprobe::compare {

// Rewrites the verdict, Result and Err_message of `rows` (one pair's, in
// order; CompareRow's results in `mode`) as msprobe's checks give them.
// `target` or `baseline` may be null. `any_dtypes`: rows of dtypes that
// MsprobeDtypesMatch (msprobe_dtypes.h) refuses are judged as a pair all the
// same (msprobe does so under a data mapping).
void ApplyMsprobeVerdicts(std::vector<RowResult>& rows, const Dump* target,
                          const Dump* baseline, Mode mode, bool strict,
                          bool any_dtypes = false);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_MSPROBE_VERDICTS_H_
