// msprobe 26.x's per-API checks (msprobe_verdicts.h).

#include "tools/compare/msprobe_verdicts.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>

#include "tools/compare/msprobe/msprobe_cells.h"
#include "tools/compare/msprobe/msprobe_dtypes.h"

namespace tprobe::compare {
namespace {

enum class Ignore { kNone, kInputs, kAll };

Ignore IgnoreOf(std::string_view entry) {
  const size_t a = entry.find('.');
  if (a == std::string_view::npos) return Ignore::kNone;
  const size_t b = entry.find('.', a + 1);
  const std::string_view api = entry.substr(a + 1, b - a - 1);
  for (std::string_view name :
       {"empty", "empty_like", "numpy", "to", "__setitem__",
        "empty_with_format", "new_empty_strided", "new_empty",
        "empty_strided"}) {
    if (api == name) return Ignore::kAll;
  }
  for (std::string_view name : {"_reduce_scatter_base", "_all_gather_base",
                                "all_to_all_single", "batch_isend_irecv"}) {
    if (api == name) return Ignore::kInputs;
  }
  return Ignore::kNone;
}

bool NonFinite(const std::optional<double>& v) {
  return v && !std::isfinite(*v);
}

// One row as msprobe's checks see it.
struct Judged {
  size_t index;  // into rows
  const Row* t;  // the target's row (always)
  const Row* b;  // the baseline's, when msprobe pairs them
  StatDiffCells norm;
  Verdict level = Verdict::kPass;
  std::vector<std::string> messages;

  void Raise(Verdict v, const std::string& message) {
    if (v == Verdict::kError || level == Verdict::kPass) level = v;
    messages.push_back(message);
  }
};

// The entry's rows: inputs (and parameters, gradients), then outputs.
struct Call {
  std::vector<Judged*> inputs, outputs;
  Ignore ignore = Ignore::kNone;

  std::vector<Judged*> Checked() const {
    if (ignore == Ignore::kAll) return {};
    if (ignore == Ignore::kInputs) return outputs;
    std::vector<Judged*> all = inputs;
    all.insert(all.end(), outputs.begin(), outputs.end());
    return all;
  }
};

// The largest NormRelativeErr of `rows` written as a percentage, or 0.
double MaxNormPercent(const std::vector<Judged*>& rows) {
  double m = 0;
  for (const Judged* j : rows) {
    if (j->norm.percent) m = std::max(m, *j->norm.percent);
  }
  return m;
}

// The smallest tensor metric of `rows` (NaN and unmeasured rows skipped),
// or 1.
template <typename Get>
double MinMetric(const std::vector<Judged*>& rows,
                 const std::vector<RowResult>& results, Get get) {
  double m = 1.0;
  for (const Judged* j : rows) {
    const RowResult& r = results[j->index];
    // msprobe measures no single element (it squeezes it to a scalar) and
    // no pair of different dtypes.
    if (!r.tensor || !j->b || r.tensor->cosine_unsupported ||
        j->t->dtype != j->b->dtype) {
      continue;
    }
    if (const std::optional<double> v = get(*r.tensor); v && !std::isnan(*v)) {
      m = std::min(m, *v);
    }
  }
  return m;
}

bool IsScalarInput(const Row& row) {
  return !row.is_tensor && row.dtype.find("class") != std::string::npos &&
         row.shape_text.empty();
}

bool ScalarsDiffer(const Row& t, const Row& b) {
  const bool numbers = t.stats.max && b.stats.max &&
                       t.dtype != "<class 'bool'>" &&
                       b.dtype != "<class 'bool'>";
  if (numbers) return !(*t.stats.max == *b.stats.max);
  return t.checksum != b.checksum;
}

void CheckCommon(Call& call) {
  for (Judged* j : call.Checked()) {
    const bool bench_bad =
        j->b && (NonFinite(j->b->stats.max) || NonFinite(j->b->stats.min));
    if (!bench_bad &&
        (NonFinite(j->t->stats.max) || NonFinite(j->t->stats.min))) {
      j->Raise(Verdict::kError,
               "error: There is nan/inf/-inf in the maximum or minimum value "
               "of NPU.");
    }
  }
}

void CheckPairing(Call& call) {
  for (Judged* j : call.Checked()) {
    if (j->b && j->t->requires_grad != j->b->requires_grad) {
      j->Raise(Verdict::kError,
               "error: The Required_Grad of NPU and Bench are inconsistent");
    }
  }
  if (call.ignore == Ignore::kNone) {
    for (Judged* j : call.inputs) {
      if (j->b && IsScalarInput(*j->t) && IsScalarInput(*j->b) &&
          ScalarsDiffer(*j->t, *j->b)) {
        j->Raise(Verdict::kError,
                 "error: The scalar parameters of NPU and Bench are "
                 "inconsistent.");
      }
    }
  }
  for (Judged* j : call.Checked()) {
    if (!j->b || j->b->name.find("qkv") != std::string::npos ||
        j->b->name.find("gate_up") != std::string::npos) {
      continue;
    }
    if (j->t->dtype != j->b->dtype) {
      j->Raise(Verdict::kError,
               "error: The dtype of NPU and Bench are inconsistent.");
    }
  }
}

void CheckStatistics(Call& call) {
  CheckCommon(call);
  const bool judged = call.ignore == Ignore::kNone;
  const double in = MaxNormPercent(call.inputs);
  if (judged && in < 0.1) {
    for (Judged* j : call.outputs) {
      if (std::fabs(j->norm.as_float) > 0.5) {
        j->Raise(Verdict::kError,
                 "error: The NormRelativeErr of output is greater than 0.5.");
      }
    }
  }
  CheckPairing(call);
  if (judged && !call.outputs.empty()) {
    const double out = MaxNormPercent(call.outputs);
    if (in == 0 ? out > 0.1 : out / in > 10) {
      call.outputs[0]->Raise(Verdict::kWarning,
                             "warning: The norm relative error of output is "
                             "10 times that of input.");
    }
  }
}

void CheckTensors(Call& call, const std::vector<RowResult>& results) {
  CheckCommon(call);
  const bool judged = call.ignore == Ignore::kNone && !call.outputs.empty();
  auto thousandth = [](const TensorMetricValues& m) -> std::optional<double> {
    return m.one_thousandth;
  };
  auto cosine = [](const TensorMetricValues& m) -> std::optional<double> {
    if (m.cosine_unsupported) return std::nullopt;
    return m.cosine;
  };
  if (judged && MinMetric(call.inputs, results, thousandth) > 0.9 &&
      MinMetric(call.outputs, results, thousandth) < 0.1) {
    call.outputs[0]->Raise(Verdict::kError,
                           "error: The input/parameters of One Thousandth Err "
                           "Ratio > 0.9 while the output < 0.6.");
  }
  CheckPairing(call);
  if (judged) {
    const double in = MinMetric(call.inputs, results, cosine);
    const double out = MinMetric(call.outputs, results, cosine);
    if (in > 0.9 && in - out > 0.1) {
      call.outputs[0]->Raise(Verdict::kWarning,
                             "warning: The input/parameters of Cosine > 0.9, "
                             "and input/parameters - output > 0.1");
    }
  }
}

void CheckChecksums(Call& call) {
  for (Judged* j : call.Checked()) {
    if (!j->b) {
      j->Raise(Verdict::kWarning,
               "warning: The parameter of NPU does not match the bench.");
    } else if (j->t->checksum != j->b->checksum) {
      j->Raise(Verdict::kError,
               "error: The CRC-32 value of NPU differs from that of the "
               "bench.");
    }
  }
}

std::string JsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "]";
}

}  // namespace

void ApplyMsprobeVerdicts(std::vector<RowResult>& rows, const Dump* target,
                          const Dump* baseline, Mode mode, bool strict,
                          bool any_dtypes) {
  if (!target) return;
  std::vector<Judged> judged;
  judged.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const RowPair& p = rows[i].pair;
    if (!p.target) continue;
    const Row& t = target->rows[*p.target];
    const Row* b = p.baseline ? &baseline->rows[*p.baseline] : nullptr;
    if (b && (p.shape_differs || t.is_tensor != b->is_tensor ||
              (!any_dtypes && !MsprobeDtypesMatch(t.dtype, b->dtype)))) {
      b = nullptr;
    }
    Judged& j = judged.emplace_back(Judged{i, &t, b, {}});
    if (b) j.norm = StatDiffs(&t, b)[3];
  }
  // The calls, in target order: rows of one entry are adjacent there, but
  // a missing row may sit between them.
  std::vector<Call> calls(target->entries.size());
  for (Judged& j : judged) {
    Call& call = calls[j.t->entry];
    const bool output = j.t->name.find(".output.") != std::string::npos;
    (output ? call.outputs : call.inputs).push_back(&j);
  }
  for (size_t e = 0; e < calls.size(); ++e) {
    Call& call = calls[e];
    if (!call.inputs.empty()) call.ignore = IgnoreOf(target->entries[e]);
    switch (mode) {
      case Mode::kStatistics:
        CheckStatistics(call);
        break;
      case Mode::kTensor:
        CheckTensors(call, rows);
        break;
      case Mode::kMd5:
      case Mode::kXor:
        CheckChecksums(call);
        break;
    }
  }
  for (Judged& j : judged) {
    RowResult& r = rows[j.index];
    if (!j.b) continue;  // extra, or a pair msprobe would not make
    Verdict v = j.level;
    std::vector<std::string> messages = std::move(j.messages);
    if (strict) {
      if (r.verdict == Verdict::kError ||
          (r.verdict == Verdict::kWarning && v == Verdict::kPass)) {
        if (v != r.verdict) {
          messages.push_back(std::string(VerdictName(r.verdict)) +
                             ": tprobe's per-row rule (--strict-verdicts).");
        }
        v = r.verdict;
      }
      if (!r.message.empty()) messages.push_back(r.message);
    } else if (!r.note.empty()) {
      messages.push_back(r.note);
    }
    r.verdict = v;
    r.result = VerdictName(v);
    r.message = JsonList(messages);
  }
}

}  // namespace tprobe::compare
