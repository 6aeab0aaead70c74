#ifndef TPROBE_COMMON_CONFIG_CONFIG_H_
#define TPROBE_COMMON_CONFIG_CONFIG_H_

// tprobe's configuration: msprobe's config.json (its keys and semantics,
// docs/format.md section 6) plus a "tprobe" section of its own settings.
//
// The client reads and validates the file once, then sends the validated
// Config to the daemon as a tprobe.v1.Config message (config_proto.h), which
// the daemon checks with FromProto without parsing JSON again. Both sides
// therefore agree on one Config value.
//
// Every key is declared once, in config_keys.h's TPROBE_CONFIG_KEYS, which
// the parser, ToJson and the proto mapping all expand.
//
// Parsing is strict where msprobe is lax: an unknown key anywhere that is
// parsed is an error naming the key and the allowed keys, and a value of the
// wrong type is an error naming the key. Where msprobe has a message for a
// bad value, the same wording is used. Every message starts with "config: ".
// A JSON null counts as an absent key, as it does in msprobe.
//
// Nothing here throws; JSON library exceptions are caught in config.cc.
//
// Thread safety: every function is pure (LoadConfigFile also reads a file)
// and may be called from any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/internal_api.h"
#include "common/status.h"

namespace tprobe::config {

// What is dumped for each selected API or module call.
enum class Task {
  kStatistics,     // per-tensor statistics in dump.json
  kTensor,         // statistics plus the tensor data as .npy files
  kOverflowCheck,  // only calls whose outputs hold NaN or Inf
  kStructure,      // msprobe 26.x: no data (dump.json's data is {}), only
                   // construct.json and stack.json
};

// What is hooked: L0 = modules, L1 = APIs, mix = both; debug = nothing,
// only what PrecisionDebugger.save() is given (msprobe's single-point
// saving, written as debug.json).
enum class Level { kL0, kL1, kMix, kDebug };

// msprobe 26.x's risk_level: which APIs levels L1 and mix dump when neither
// scope nor list is given (client/risk_level.h). kFocus is msprobe's
// default: everything but the low-risk APIs (views, casts, factories...).
enum class RiskLevel { kCore, kFocus, kAll };

// The per-tensor summary in statistics mode: Max/Min/Mean/Norm, or those
// plus a checksum (msprobe's "md5", which is actually a CRC-32).
enum class SummaryMode { kStatistics, kMd5, kXor };

// What a producer does when its ring is full: drop the record at once, or
// wait up to block_timeout_ms and then drop it.
enum class FullRingPolicy { kDrop, kBlock };

// tprobe.statistics_on: who computes a tensor's Max, Min, Mean and Norm.
// kAuto: the framework on the tensor's device for device tensors, the daemon
// for host tensors; kFramework: the framework for every tensor (how the
// device path is tested on a CPU); kDaemon: the daemon, from the tensor's
// bytes (a device tensor is copied to the host first).
enum class StatisticsOn { kAuto, kFramework, kDaemon };

// msprobe's data_mode as two independent filters. A call's data is dumped
// when its direction passes the first filter and its side passes the second:
// see DataModeSelected. A filter the config did not mention lets everything
// through, so ["forward"] keeps forward input and output, ["input"] keeps
// forward and backward inputs, and ["all"] (or an empty list) keeps all.
// Parsed values always let at least one direction and one side through.
struct DataMode {
  bool forward = true, backward = true, input = true, output = true;

  friend bool operator==(const DataMode&, const DataMode&) = default;
};

// Range of rank and step values, and of the list lengths (msprobe's limit).
inline constexpr int64_t kStepRankMax = 1000000;
// Bounds of the "tprobe" section.
inline constexpr uint64_t kMinRingBytes = uint64_t{1} << 16;
inline constexpr uint64_t kMaxRingBytes = uint64_t{1} << 30;
inline constexpr uint32_t kMaxRingCount = 64;
// Data bytes of a rank's boundary ring (the segment's last ring, beside its
// ring_count data rings), whatever ring_bytes says: it carries only step
// boundaries, a few hundred bytes each, and a rank under policy block stays
// within 256 steps of its daemon.
inline constexpr uint64_t kBoundaryRingBytes = uint64_t{1} << 20;
inline constexpr uint32_t kMaxExitTimeoutMs = 600000;
// A Unix socket path holds at most 107 bytes (sun_path less its NUL).
inline constexpr size_t kMaxSocketPathBytes = 107;

// A validated configuration. The defaults are msprobe's default config.json
// and tprobe's default ring settings, so Config{} is what "{}" parses to.
struct Config {
  Task task = Task::kStatistics;
  std::string dump_path = "./dump_path";
  // Expanded from ints and "a-b" ranges, deduplicated and sorted, each in
  // [0, kStepRankMax]. Empty selects every rank (step).
  std::vector<int64_t> ranks;
  std::vector<int64_t> steps;
  Level level = Level::kL1;
  RiskLevel risk_level = RiskLevel::kFocus;
  // Empty, or exactly the full names [start, end] of the dump range.
  std::vector<std::string> scope;
  // Substrings of full names to dump; empty dumps every name.
  std::vector<std::string> list;
  DataMode data_mode;
  // Only the statistics and tensor tasks set this.
  SummaryMode summary_mode = SummaryMode::kStatistics;
  // Only the overflow_check task sets this. -1 = unlimited, else >= 1.
  int64_t overflow_nums = 1;

  // The "tprobe" section.
  // The daemon's control socket; empty means the default resolution.
  std::string socket;
  // Data bytes of each ring: a power of two in [kMinRingBytes, kMaxRingBytes].
  uint64_t ring_bytes = 8 << 20;
  // Rings per producer, in [1, kMaxRingCount].
  uint32_t ring_count = 4;
  FullRingPolicy policy = FullRingPolicy::kBlock;
  // How long kBlock waits for space before dropping.
  uint32_t block_timeout_ms = 100;
  // How long a trainer waits at exit for the daemon to confirm its final
  // drain, in [0, kMaxExitTimeoutMs]. Whatever is still in the rings then
  // is the daemon's to finish: nothing is lost by not waiting longer.
  uint32_t exit_timeout_ms = 1000;
  StatisticsOn statistics_on = StatisticsOn::kAuto;

  friend bool operator==(const Config&, const Config&) = default;
};

// "auto", "framework" or "daemon".
std::string_view StatisticsOnName(StatisticsOn on);

// Parses and validates the text of a config.json. The keys and what tprobe
// does with each are msprobe_keys.h's tables (docs/msprobe-api.md lists
// them): every key msprobe 26.2 reads is accepted, a key tprobe does not act
// on adds one line to *warnings ("config: <key> has no effect: <why>"), a
// key of what tprobe does not support (level L2, the ATB dump, task
// acc_check, ...) is an error that says so, and an unknown key is an error
// that suggests the nearest known key. Only the task section named by
// `task` is read; the other task sections are ignored, as msprobe ignores
// them. On failure returns an error saying which key is wrong and why, or,
// for text that is not JSON, where parsing stopped; *warnings is then left
// as it was. `warnings` may be null.
Result<Config> ParseConfig(std::string_view json_text,
                           std::vector<std::string>* warnings = nullptr);

// Reads the file at `path` and parses it with ParseConfig. Every error
// message names `path`.
// (The Python binding calls it for the warnings: tprobe._C.config_warnings.)
TPROBE_INTERNAL Result<Config> LoadConfigFile(
    const std::string& path,
    std::vector<std::string>* warnings = nullptr) noexcept;

// The canonical JSON text of `config` (indent 1, no trailing newline), which
// ParseConfig reads back to an equal Config. It holds only the keys that
// Config keeps: the task section of config.task and the "tprobe" section.
// Runs of consecutive ranks or steps are written as "a-b" ranges.
// REQUIRES: config is valid, as ParseConfig returns it: ranks and steps sorted
// and in range, summary_mode and overflow_nums at their defaults unless the
// task uses them, and data_mode letting a direction and a side through.
std::string ToJson(const Config& config);

// True when data of `step` is dumped: steps is empty or holds it.
TPROBE_INTERNAL bool StepSelected(const Config& config, int64_t step) noexcept;

// True when `rank` dumps: ranks is empty or holds it. A process without a
// distributed rank passes -1 and is always selected.
TPROBE_INTERNAL bool RankSelected(const Config& config, int64_t rank) noexcept;

// The last step to dump, max(steps), or nullopt when every step is dumped.
// After it the client stops dumping for good (msprobe's start()).
TPROBE_INTERNAL std::optional<int64_t> LastStep(const Config& config) noexcept;

// True when data_mode lets through the forward (else backward) call's
// inputs (else outputs).
bool DataModeSelected(const DataMode& mode, bool forward, bool input);

// msprobe's spelling: "statistics", "tensor", "overflow_check"; "L0",
// "L1", "mix"; and "CORE", "FOCUS", "ALL".
TPROBE_INTERNAL std::string_view TaskName(Task task) noexcept;
TPROBE_INTERNAL std::string_view LevelName(Level level) noexcept;
TPROBE_INTERNAL std::string_view RiskLevelName(RiskLevel risk_level) noexcept;

}  // namespace tprobe::config

#endif  // TPROBE_COMMON_CONFIG_CONFIG_H_
