// The compare engine (comparison.h).

#include "tools/compare/comparison.h"

#include <algorithm>
#include <mutex>

#include "tools/common/parallel.h"
#include "tools/compare/matcher.h"
#include "tools/compare/msprobe_verdicts.h"

namespace tprobe::compare {
namespace {

constexpr size_t kRowsPerTask = 64;

// The mode both sides allow: their own when equal, else statistics (every
// tree has them), with a note.
Mode CommonMode(PairResult& p) {
  if (!p.target) return p.baseline->mode;
  if (!p.baseline) return p.target->mode;
  const Mode a = p.target->mode, b = p.baseline->mode;
  if (a == b) return a;
  p.note = std::string("The target's task is ") + ModeName(a) +
           " and the baseline's " + ModeName(b) +
           ": compared by the statistics. ";
  return Mode::kStatistics;
}

void Summarize(PairResult& p) {
  for (size_t i = 0; i < p.rows.size(); ++i) {
    const Verdict v = p.rows[i].verdict;
    ++p.counts[static_cast<size_t>(v)];
    if (v != Verdict::kPass && !p.first_divergence) p.first_divergence = i;
  }
}

// Loads every dump.json, two per pair, in parallel.
Status LoadDumps(const std::vector<DumpPair>& pairs,
                 const CompareOptions& options, tools::Reporter& reporter,
                 CompareResult& result) {
  reporter.StartPhase("reading dump.json files", pairs.size() * 2);
  std::mutex mu;
  Status failed = Status::Ok();
  tools::ParallelFor(pairs.size() * 2, options.threads, [&](size_t i) {
    PairResult& p = result.pairs[i / 2];
    const DumpPair& pair = pairs[i / 2];
    const std::optional<std::string>& path =
        i % 2 == 0 ? pair.target : pair.baseline;
    if (path) {
      Result<Dump> dump = LoadDump(*path);
      std::lock_guard lock(mu);
      if (!dump.ok()) {
        if (failed.ok()) failed = dump.status();
      } else {
        (i % 2 == 0 ? p.target : p.baseline) = std::move(*dump);
      }
    }
    reporter.Advance();
  });
  reporter.FinishPhase();
  return failed;
}

// Each pair's msprobe mapping: a layer mapping makes one per pair.
Result<std::vector<MsprobeMapping>> MsprobeMappings(
    const CompareOptions& options, const CompareResult& result) {
  std::vector<MsprobeMapping> msprobe(result.pairs.size(),
                                      options.msprobe_mapping);
  for (size_t i = 0; i < result.pairs.size(); ++i) {
    const PairResult& p = result.pairs[i];
    if (!p.target || !p.baseline) continue;
    // --api-mapping FILE: the items of APIs both dumps call.
    if (options.msprobe_mapping.has_api_items()) {
      msprobe[i] = options.msprobe_mapping.ForPair(*p.target, *p.baseline);
    }
    if (!options.layer_mapping) continue;
    Result<MsprobeMapping> made =
        options.layer_mapping->DataMapping(*p.target, *p.baseline);
    if (!made.ok()) return made.status();
    msprobe[i] = std::move(*made);
  }
  return msprobe;
}

// A run of one pair's rows that one thread compares.
struct Task {
  size_t pair, begin, end;
};

// Matches the rows of every pair; returns the tasks that compare them.
std::vector<Task> MatchPairs(const CompareOptions& options,
                             const std::vector<MsprobeMapping>& msprobe,
                             CompareResult& result) {
  std::vector<Task> tasks;
  for (size_t i = 0; i < result.pairs.size(); ++i) {
    PairResult& p = result.pairs[i];
    p.mode = CommonMode(p);
    const MatchOptions match{
        options.fuzzy, options.mapping.empty() ? nullptr : &options.mapping,
        msprobe[i].empty() ? nullptr : &msprobe[i]};
    const std::vector<RowPair> matched =
        MatchRows(p.target ? &*p.target : nullptr,
                  p.baseline ? &*p.baseline : nullptr, match);
    p.rows.resize(matched.size());
    for (size_t r = 0; r < matched.size(); ++r) p.rows[r].pair = matched[r];
    for (size_t at = 0; at < matched.size(); at += kRowsPerTask) {
      tasks.push_back({i, at, std::min(at + kRowsPerTask, matched.size())});
    }
    result.rows += matched.size();
  }
  return tasks;
}

// Compares the rows of every pair as one pool of tasks.
void CompareRows(const std::vector<Task>& tasks, const CompareOptions& options,
                 tools::Reporter& reporter, CompareResult& result) {
  tools::ParallelFor(tasks.size(), options.threads, [&](size_t t) {
    const Task& task = tasks[t];
    PairResult& p = result.pairs[task.pair];
    for (size_t r = task.begin; r < task.end; ++r) {
      p.rows[r] = CompareRow(p.rows[r].pair, p.target ? &*p.target : nullptr,
                             p.baseline ? &*p.baseline : nullptr, p.mode);
      if (!p.note.empty()) {
        p.rows[r].message += p.note;
        p.rows[r].note += p.note;
      }
    }
    reporter.Advance(task.end - task.begin);
  });
}

// Counts each pair's verdicts, and finds the first divergence: the
// earliest step, then the rank whose first divergent row comes earliest
// in its execution order.
void FindFirstDivergence(CompareResult& result) {
  double best = 2;
  for (size_t i = 0; i < result.pairs.size(); ++i) {
    PairResult& p = result.pairs[i];
    Summarize(p);
    for (int v = 0; v < kVerdictCount; ++v) result.counts[v] += p.counts[v];
    if (!p.first_divergence) continue;
    const double at = static_cast<double>(*p.first_divergence) /
                      static_cast<double>(p.rows.size());
    const bool earlier_step =
        result.first_pair &&
        p.pair.step.value_or(0) <
            result.pairs[*result.first_pair].pair.step.value_or(0);
    if (!result.first_pair || earlier_step ||
        (p.pair.step == result.pairs[*result.first_pair].pair.step &&
         at < best)) {
      result.first_pair = i;
      best = at;
    }
  }
}

}  // namespace

const Row& PairResult::RowOf(const RowResult& r) const {
  return r.pair.target ? target->rows[*r.pair.target]
                       : baseline->rows[*r.pair.baseline];
}

const Dump& PairResult::DumpOf(const RowResult& r) const {
  return r.pair.target ? *target : *baseline;
}

Result<CompareResult> CompareTrees(const std::string& target,
                                   const std::string& baseline,
                                   const CompareOptions& options,
                                   tools::Reporter& reporter) {
  Result<std::vector<DumpPair>> pairs = FindPairs(target, baseline);
  if (!pairs.ok()) return pairs.status();
  CompareResult result;
  result.pairs.resize(pairs->size());
  for (size_t i = 0; i < pairs->size(); ++i) {
    result.pairs[i].pair = (*pairs)[i];
  }
  if (Status s = LoadDumps(*pairs, options, reporter, result); !s.ok()) {
    return s;
  }
  Result<std::vector<MsprobeMapping>> msprobe =
      MsprobeMappings(options, result);
  if (!msprobe.ok()) return msprobe.status();
  const std::vector<Task> tasks = MatchPairs(options, *msprobe, result);
  reporter.StartPhase("comparing rows", result.rows);
  CompareRows(tasks, options, reporter, result);
  tools::ParallelFor(result.pairs.size(), options.threads, [&](size_t i) {
    PairResult& p = result.pairs[i];
    ApplyMsprobeVerdicts(p.rows, p.target ? &*p.target : nullptr,
                         p.baseline ? &*p.baseline : nullptr, p.mode,
                         options.strict_verdicts,
                         (*msprobe)[i].ignores_dtypes());
  });
  reporter.FinishPhase();
  FindFirstDivergence(result);
  return result;
}

}  // namespace tprobe::compare
