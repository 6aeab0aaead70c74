#ifndef TPROBE_TOOLS_IMPORT_SOURCE_LAYOUT_H_
#define TPROBE_TOOLS_IMPORT_SOURCE_LAYOUT_H_

// Where a MindSpore graph-mode dump keeps its files, and where the import
// writes each step and rank.
//
//   tensor task      SRC/step{N}/rank{R}/dump_tensor_data/*.npy
//   statistics task  SRC/rank_{R}/…/{N}/statistic.csv, at most 4 levels
//                    below rank_{R} (rank_{R}/{net}/{graph}/{N}/ as the
//                    kernel-by-kernel dump writes it); the CSVs of all
//                    graphs of step N are one step
//
// MindSpore names the rank rank{RANK_ID} (rank_{RANK_ID}) when RANK_ID is
// set and rank0 (rank_0) otherwise; msprobe then writes the single-card
// case, with no RANK_ID, as "rank". Offline that case is recognised as: no
// --rank given and rank 0 the only rank found.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tprobe::import {

// One step of one rank of a tensor-task dump.
struct TensorStepSource {
  uint32_t step = 0;
  int rank = 0;
  std::string data_dir;  // SRC/step{N}/rank{R}/dump_tensor_data
  // The names of the files to import, sorted. Hidden files (".…") and
  // names already in msprobe's data_name form are left out.
  std::vector<std::string> files;
  size_t already_imported = 0;  // data_name-form files left out
};

// One step of one rank of a statistics-task dump.
struct StatisticsStepSource {
  uint32_t step = 0;
  int rank = 0;
  std::vector<std::string> csv_files;  // sorted paths
};

// Finds the step{N}/rank{R}/dump_tensor_data/ directories under `src`
// (only rank `only_rank` when set), sorted by step, then rank. Other
// entries are ignored.
//
// Returns an error when `src` is not a readable directory, or when no
// such directory is found (the message says what was expected).
Result<std::vector<TensorStepSource>> FindTensorSteps(
    const std::string& src, std::optional<int> only_rank);

// Finds the statistic.csv files under `src`/rank_{R}/, grouped by step,
// sorted by step, then rank.
//
// Returns an error when `src` is not a readable directory, when no file is
// found, or when a file's directory name is not a step number (naming it).
Result<std::vector<StatisticsStepSource>> FindStatisticsSteps(
    const std::string& src, std::optional<int> only_rank);

// The rank directory number to write for a source rank: -1 ("rank") in the
// single-card case, `rank` otherwise. `ranks_found` is every rank found in
// the source.
int OutputRank(int rank, const std::vector<int>& ranks_found,
               std::optional<int> only_rank);

// `dir`/`name`, without doubling a trailing '/'.
std::string JoinPath(const std::string& dir, const std::string& name);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_SOURCE_LAYOUT_H_
