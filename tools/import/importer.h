#ifndef TPROBE_TOOLS_IMPORT_IMPORTER_H_
#define TPROBE_TOOLS_IMPORT_IMPORTER_H_

// `tprobe import`: turns a MindSpore graph-mode raw dump (msprobe's cell
// dump, which cannot run Python hooks and writes TensorDump files instead)
// into msprobe's dump tree, offline:
//
//   DST/step{N}/rank{R}/dump.json        task, level L0, framework mindspore
//                       stack.json       an empty list per cell call
//                       construct.json   each call's parent cell call
//                       tprobe.json      tprobe's accounting
//                       dump_tensor_data/  (tensor task) the .npy files
//                                          under msprobe's data_name
//
// It does what msprobe's cell_dump_process does after a run: order the
// dumps, drop repeated ones, number each cell's calls, and derive the
// cell hierarchy from the names. Unlike it, the source is never modified:
// tensor files are hard-linked (or copied) under their new names, and
// every file is written through a temporary name and a rename, so an
// import can be re-run and gives the same bytes.
//
// Work runs in phases, so that bad input fails before anything is written:
// find the source directories, read and check every source file (in
// parallel), order and number every step, then write the steps (in
// parallel).

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/common/reporter.h"

namespace tprobe::import {

enum class Task {
  kTensor,      // SRC/step{N}/rank{R}/dump_tensor_data/*.npy
  kStatistics,  // SRC/rank_{R}/…/{N}/statistic.csv
};

struct ImportOptions {
  Task task = Task::kTensor;
  std::string source;
  // Where the tree goes; empty means `source` (msprobe writes the tree
  // into its dump path).
  std::string destination;
  // Import only this rank and name it rank{R}, as RANK_ID does. Without
  // it every rank is imported, and a lone rank 0 is written as "rank".
  std::optional<int> rank;
  // Before starting, wait until nothing under `source` has changed for
  // this long (0: start at once).
  std::chrono::seconds wait{0};
  // Worker threads; 0 means DefaultThreadCount().
  size_t threads = 0;
};

struct ImportSummary {
  std::vector<std::string> directories;  // step{N}/rank{R} dirs written
  size_t tensors = 0;                    // tensors in the dump.json files
  size_t duplicates_dropped = 0;
  size_t already_imported = 0;  // data_name-form source files left alone
};

// Runs the import, logging dropped duplicates and (on a terminal) progress
// through `reporter`.
//
// Returns an error with a message a user can act on when the source does
// not exist or holds no dump of the task, when a source file name does not
// parse, a .npy file is corrupt, or a statistic.csv lacks needed columns
// (nothing is written then), or when the destination cannot be written.
Result<ImportSummary> Import(const ImportOptions& options,
                             tools::Reporter& reporter);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_IMPORTER_H_
