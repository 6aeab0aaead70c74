#ifndef TPROBE_COMMON_CONFIG_CONFIG_KEYS_H_
#define TPROBE_COMMON_CONFIG_CONFIG_KEYS_H_

// The config schema: every key that Config holds, and every other key of
// config.json whose value tprobe checks, is declared once, in
// TPROBE_CONFIG_KEYS. Parsing (config.cc), ToJson, the proto mapping
// (config_proto.cc), the live check (FixedKeyChange) and the key table of
// docs/configuration.md (KeyTableMarkdown, compared by config_test) are all
// expansions of it, as record_losses.h's lists are for loss reasons.
//
// A row is one of
//   KEY(sections, key, member, Type, lo, hi, live)
//     `key` as config.json spells it, in `sections` (Sections of
//     msprobe_keys.h: kTopLevel, kTprobeSection or task sections), read into
//     Config::member, which is also the name of its field in control.proto's
//     Config message. `Type` is one of the value types below; it says how
//     the value is parsed, written and carried, within [lo, hi] where the
//     type takes bounds (0, 0 where it does not). `live` is kLive when a
//     running training may take a new value (`tprobe configure`), else
//     kFixed. A key of a task section is read in the sections of the tasks
//     it names only, and a Config of another task holds its default.
//   CHECK(sections, key, Check)
//     a key whose value is validated and then has no effect on Config;
//     `Check` is config.cc's function for it, which also says when the value
//     asks for something tprobe does not do (then config.cc adds the key's
//     warning from msprobe_keys.h).
// Rows are read in order: the top level first, then the task section, then
// the "tprobe" section; the first bad value is the error. Adding a key is a
// row here, a field in control.proto's Config for a KEY, and, for a new
// value type, its handling in config.cc and config_proto.cc. A key of
// msprobe's file is also a row of TPROBE_MSPROBE_KEYS (msprobe_keys.h), the
// list of what msprobe reads; config.cc fails to compile when one is
// missing there.
//
// Thread safety: constant data.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "common/config/config.h"
#include "common/config/msprobe_keys.h"

namespace tprobe::config {

// The value types of KEY rows (tags; their handling is in config.cc and
// config_proto.cc).
struct EnumName {};       // an enum named by EnumNames<E>
struct RiskName {};       // risk_level: as EnumName, and null or "" is ALL
struct SummaryName {};    // summary_mode: as EnumName, msprobe's messages
struct DumpPath {};       // a string, not empty
struct SocketPath {};     // a string of at most hi bytes
struct Ranges {};         // ints and "a-b" ranges in [lo, hi], expanded
struct Names {};          // a list of strings
struct Scope {};          // a list of no names or exactly two [start, end]
struct Modes {};          // data_mode: directions and sides to keep
struct OverflowCount {};  // -1 (no limit) or a positive integer
struct Integer {};        // an integer in [lo, hi]
struct PowerOfTwo {};     // a power of two in [lo, hi]

enum class Live { kLive, kFixed };

// clang-format off
#define TPROBE_CONFIG_KEYS(KEY, CHECK)                                         \
  KEY(kTopLevel, task, task, EnumName, 0, 0, kLive)                            \
  KEY(kTopLevel, dump_path, dump_path, DumpPath, 0, 0, kLive)                  \
  KEY(kTopLevel, rank, ranks, Ranges, 0, kStepRankMax, kLive)                  \
  KEY(kTopLevel, step, steps, Ranges, 0, kStepRankMax, kLive)                  \
  KEY(kTopLevel, level, level, EnumName, 0, 0, kLive)                          \
  CHECK(kTopLevel, dump_enable, Boolean)                                       \
  CHECK(kTopLevel, enable_dataloader, BooleanWarnTrue)                         \
  CHECK(kTopLevel, async_dump, Boolean)                                        \
  CHECK(kTopLevel, extra_info, BooleanWarnFalse)                               \
  KEY(kTopLevel, risk_level, risk_level, RiskName, 0, 0, kLive)                \
  CHECK(kTopLevel, precision, Precision)                               \
  KEY(kTaskSections, scope, scope, Scope, 0, 0, kLive)                         \
  KEY(kTaskSections, list, list, Names, 0, 0, kLive)                           \
  KEY(kTaskSections, data_mode, data_mode, Modes, 0, 0, kLive)                 \
  KEY(kStatisticsSection | kTensorSection, summary_mode, summary_mode,         \
      SummaryName, 0, 0, kLive)                                                \
  CHECK(kStatisticsSection, tensor_list, EmptyTensorList)                      \
  CHECK(kTensorSection, file_format, FileFormat)                               \
  KEY(kOverflowCheckSection, overflow_nums, overflow_nums, OverflowCount,      \
      0, 0, kLive)                                                             \
  CHECK(kOverflowCheckSection, check_mode, CheckMode)                          \
  KEY(kTprobeSection, socket, socket, SocketPath, 0, kMaxSocketPathBytes,      \
      kFixed)                                                                  \
  KEY(kTprobeSection, ring_bytes, ring_bytes, PowerOfTwo, kMinRingBytes,       \
      kMaxRingBytes, kFixed)                                                   \
  KEY(kTprobeSection, ring_count, ring_count, Integer, 1, kMaxRingCount,       \
      kFixed)                                                                  \
  KEY(kTprobeSection, policy, policy, EnumName, 0, 0, kFixed)                  \
  KEY(kTprobeSection, block_timeout_ms, block_timeout_ms, Integer, 0,          \
      std::numeric_limits<uint32_t>::max(), kFixed)                            \
  KEY(kTprobeSection, exit_timeout_ms, exit_timeout_ms, Integer, 0,            \
      kMaxExitTimeoutMs, kFixed)                                               \
  KEY(kTprobeSection, statistics_on, statistics_on, EnumName, 0, 0, kFixed)
// clang-format on

// What a KEY row's handling needs besides the value: the key as messages
// name it ("level", "tprobe.ring_bytes") and its bounds.
struct KeySpec {
  std::string_view key;
  uint32_t sections;
  int64_t lo, hi;

  // "tprobe.<key>" in the tprobe section, else the key.
  std::string Name() const {
    return sections == kTprobeSection ? "tprobe." + std::string(key)
                                      : std::string(key);
  }
};

// The Sections bit of the section of `task`.
constexpr uint32_t SectionOf(Task task) {
  return 1u << static_cast<uint32_t>(task);
}
static_assert(SectionOf(Task::kStatistics) == kStatisticsSection &&
              SectionOf(Task::kTensor) == kTensorSection &&
              SectionOf(Task::kOverflowCheck) == kOverflowCheckSection &&
              SectionOf(Task::kStructure) == kStructureSection);

// The name config.json gives each value of an enum of Config, and the
// choices an error message lists. The first row is what a value outside the
// enum is written as.
template <typename E>
struct Named {
  E value;
  std::string_view name;
};
template <typename E>
struct EnumNames;
template <>
struct EnumNames<Task> {
  static constexpr Named<Task> kNames[] = {
      {Task::kStatistics, "statistics"},
      {Task::kTensor, "tensor"},
      {Task::kOverflowCheck, "overflow_check"},
      {Task::kStructure, "structure"}};
  static constexpr std::string_view kChoices =
      "[statistics, tensor, overflow_check, structure]";
};
template <>
struct EnumNames<Level> {
  static constexpr Named<Level> kNames[] = {{Level::kL1, "L1"},
                                            {Level::kL0, "L0"},
                                            {Level::kMix, "mix"},
                                            {Level::kDebug, "debug"}};
  static constexpr std::string_view kChoices = "[L0, L1, mix, debug]";
};
template <>
struct EnumNames<RiskLevel> {
  static constexpr Named<RiskLevel> kNames[] = {{RiskLevel::kFocus, "FOCUS"},
                                                {RiskLevel::kCore, "CORE"},
                                                {RiskLevel::kAll, "ALL"}};
  static constexpr std::string_view kChoices = "['CORE', 'FOCUS', 'ALL']";
};
template <>
struct EnumNames<SummaryMode> {
  static constexpr Named<SummaryMode> kNames[] = {
      {SummaryMode::kStatistics, "statistics"},
      {SummaryMode::kMd5, "md5"},
      {SummaryMode::kXor, "xor"}};
  static constexpr std::string_view kChoices = "['statistics', 'md5', 'xor']";
};
template <>
struct EnumNames<FullRingPolicy> {
  static constexpr Named<FullRingPolicy> kNames[] = {
      {FullRingPolicy::kBlock, "block"}, {FullRingPolicy::kDrop, "drop"}};
  static constexpr std::string_view kChoices = "[drop, block]";
};
template <>
struct EnumNames<StatisticsOn> {
  static constexpr Named<StatisticsOn> kNames[] = {
      {StatisticsOn::kAuto, "auto"},
      {StatisticsOn::kFramework, "framework"},
      {StatisticsOn::kDaemon, "daemon"}};
  static constexpr std::string_view kChoices = "[auto, framework, daemon]";
};

template <typename E>
constexpr std::string_view NameOf(E value) {
  for (const auto& row : EnumNames<E>::kNames) {
    if (row.value == value) return row.name;
  }
  return EnumNames<E>::kNames[0].name;
}

// A key that cannot change live and differs between two configs, with its
// two values as config.json writes them (strings without quotes).
struct KeyChange {
  std::string key;  // "tprobe.ring_bytes"
  std::string was, now;
};

// The first KEY row marked kFixed whose value differs between `running` and
// `next`, in table order; nullopt when every such key is equal.
std::optional<KeyChange> FixedKeyChange(const Config& running,
                                        const Config& next);

// docs/configuration.md's key table: a markdown table with a row per KEY,
// in table order (config_test checks that the document holds it).
std::string KeyTableMarkdown();

}  // namespace tprobe::config

#endif  // TPROBE_COMMON_CONFIG_CONFIG_KEYS_H_
