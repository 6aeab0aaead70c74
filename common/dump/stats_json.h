#ifndef TPROBE_COMMON_DUMP_STATS_JSON_H_
#define TPROBE_COMMON_DUMP_STATS_JSON_H_

// The one place where tensor statistics (common/stats/tensor_stats.h) become
// dump.json values, in msprobe's spelling: each Stat is written as its kind,
// so an integer stays a JSON integer ("999"), a float is a JSON float
// ("999.0", "NaN", "Infinity", "-Infinity" through PythonJsonDumps), a bool
// is true or false, and an absent statistic is null.

#include "common/dump/json_stream_writer.h"
#include "common/dump/json_writer.h"
#include "common/stats/tensor_stats.h"

namespace tprobe::dump {

// Appends "Max", "Min", "Mean" and "Norm", in that order, to the JSON object
// `tensor` (a key already there keeps its place and takes the new value).
//
// REQUIRES: `tensor` is a JSON object (or null, which becomes one).
//
// Thread safety: pure.
void AppendStats(const stats::TensorStats& stats, Json* tensor);

// Writes the same four keys and values to the dict `writer` has open.
//
// Thread safety: pure (but for `writer`).
void WriteStats(const stats::TensorStats& stats, JsonStreamWriter& writer);

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_STATS_JSON_H_
