#ifndef TPROBE_COMMON_CONFIG_MSPROBE_KEYS_H_
#define TPROBE_COMMON_CONFIG_MSPROBE_KEYS_H_

// The keys of msprobe 26.2's config.json (and the older ones its docs still
// show) and what tprobe does with each: one table, TPROBE_MSPROBE_KEYS, that
// config.cc checks a file against and docs/msprobe-api.md lists for users.
//
// A key is one of:
// - acted on: config.cc reads it into Config (or the Python adapter acts on
//   it, as for dump_enable);
// - checked: its value is validated as msprobe does; it changes nothing in
//   tprobe's output, and config.cc warns (KeyRule::why) only for a value
//   that asks for something tprobe does not do (extra_info false, ...);
// - ignored: accepted, and config.cc adds one warning line that names it and
//   says why it has no effect (KeyRule::why);
// - refused: an error whose message says what tprobe does not support
//   (KeyRule::why);
// - a section of a task tprobe does not run: accepted and not read, as
//   msprobe reads only the section of its own task.
// Any other key is unknown: an error that suggests the nearest known key.
//
// Thread safety: everything here is constant data and pure functions.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace tprobe::config {

enum class KeyUse {
  kActed,    // read into Config, or acted on by the adapter
  kChecked,  // validated; a warning (why) for a value tprobe does not honour
  kIgnored,  // accepted with one warning (why)
  kRefused,  // an error (why)
  kSection,  // the section of a task tprobe does not run: not read
};

// Where in config.json a key may appear: bits, so that one row of a table
// can name several task sections. The task bits follow config::Task's order
// (config_keys.h checks it).
enum Sections : uint32_t {
  kStatisticsSection = 1u << 0,
  kTensorSection = 1u << 1,
  kOverflowCheckSection = 1u << 2,
  kStructureSection = 1u << 3,
  kTaskSections = kStatisticsSection | kTensorSection | kOverflowCheckSection |
                  kStructureSection,
  kTopLevel = 1u << 4,
  kTprobeSection = 1u << 5,
};

struct KeyRule {
  std::string_view key;
  KeyUse use;
  // For kIgnored and kChecked: why the key has no effect, a clause that follows
  // "<key> has no effect: ". For kRefused: what is not supported, a sentence
  // that follows "<key>: ". Empty otherwise.
  std::string_view why;
};

// Why keys have no effect, or are refused, where several keys share a reason.
inline constexpr std::string_view kAtbWhy =
    "msprobe's ATB dump (its config has a top-level 'device' key) is not "
    "supported by tprobe; use a PyTorch or MindSpore config.json";
inline constexpr std::string_view kSliceWhy =
    "tprobe dumps whole tensors, not slices of them";
inline constexpr std::string_view kRequestIdWhy =
    "it selects an inference request; tprobe dumps every call";
inline constexpr std::string_view kDiffCheckWhy =
    "it is diff_check's; tprobe does not run diff_check";

// Every key of msprobe's config.json, one row each:
// X(sections, key, use, why), with `sections` the Sections it may appear in
// and `use` a KeyUse. A section's keys are its rows in this order, which is
// the order error messages list them in. The "tprobe" section is not
// msprobe's: its keys are config_keys.h's.
// clang-format off
#define TPROBE_MSPROBE_KEYS(X)                                                \
  X(kTopLevel, task, kActed, "")                                              \
  X(kTopLevel, dump_path, kActed, "")                                         \
  X(kTopLevel, rank, kActed, "")                                              \
  X(kTopLevel, step, kActed, "")                                              \
  X(kTopLevel, level, kActed, "")                                             \
  X(kTopLevel, risk_level, kActed, "")                                        \
  X(kTopLevel, dump_enable, kActed, "")                                       \
  X(kTopLevel, statistics, kActed, "")                                        \
  X(kTopLevel, tensor, kActed, "")                                            \
  X(kTopLevel, overflow_check, kActed, "")                                    \
  X(kTopLevel, structure, kActed, "")                                         \
  X(kTopLevel, tprobe, kActed, "")                                            \
  X(kTopLevel, async_dump, kChecked, "")                                      \
  X(kTopLevel, extra_info, kChecked,                                          \
    "tprobe always writes stack.json and construct.json")                     \
  X(kTopLevel, precision, kChecked,                                           \
    "tprobe computes each statistic one way whatever precision says "         \
    "(docs/format.md)")                                                       \
  X(kTopLevel, enable_dataloader, kChecked,                                   \
    "call start(), stop() and step() in the training loop (msprobe "          \
    "deprecates the key too)")                                                \
  X(kTopLevel, custom_op_namespaces, kIgnored,                                \
    "tprobe does not hook torch.ops namespaces (NPU custom operators)")       \
  X(kTopLevel, acl_config, kIgnored,                                          \
    "it configures msprobe's Ascend ACL dump, which tprobe does not run")     \
  X(kTopLevel, seed, kIgnored,                                                \
    "tprobe does not seed from config.json; call "                            \
    "tprobe.torch.seed_all(seed=..., mode=...)")                              \
  X(kTopLevel, is_deterministic, kIgnored,                                    \
    "tprobe does not set deterministic algorithms from config.json; call "    \
    "tprobe.torch.seed_all(seed=..., mode=True)")                             \
  X(kTopLevel, load, kRefused,                                                \
    "replacing module inputs with previously dumped tensors (msprobe's "      \
    "'load' section) is not supported by tprobe; remove the section")         \
  X(kTopLevel, device, kRefused, kAtbWhy)                                     \
  X(kTopLevel, exec_range, kRefused, kAtbWhy)                                 \
  X(kTopLevel, ids, kRefused, kAtbWhy)                                        \
  X(kTopLevel, op_name, kRefused, kAtbWhy)                                    \
  X(kTopLevel, save_child, kRefused, kAtbWhy)                                 \
  X(kTopLevel, filter_level, kRefused, kAtbWhy)                               \
  X(kTopLevel, acc_check, kSection, "")                                       \
  X(kTopLevel, diff_check, kSection, "")                                      \
  X(kTopLevel, nan_check, kSection, "")                                       \
  X(kTopLevel, exception_dump, kSection, "")                                  \
  X(kTopLevel, run_ut, kSection, "")                                          \
  X(kTopLevel, grad_probe, kSection, "")                                      \
  X(kTopLevel, free_benchmark, kSection, "")                                  \
  /* msprobe's BaseConfig: the keys of every task section */                  \
  X(kTaskSections, scope, kActed, "")                                         \
  X(kTaskSections, list, kActed, "")                                          \
  X(kTaskSections, data_mode, kActed, "")                                     \
  X(kTaskSections, slice, kIgnored, kSliceWhy)                                \
  X(kTaskSections, request_id, kIgnored, kRequestIdWhy)                       \
  X(kTaskSections, diff_nums, kIgnored, kDiffCheckWhy)                        \
  X(kStatisticsSection | kTensorSection, summary_mode, kActed, "")            \
  X(kStatisticsSection, tensor_list, kActed, "")                              \
  X(kStatisticsSection, device, kIgnored,                                     \
    "it is MindSpore static graph's; tprobe computes statistics where "       \
    "tprobe.statistics_on says")                                              \
  X(kStatisticsSection, precision, kIgnored,                                  \
    "it is MindSpore static graph's device statistics precision; tprobe "     \
    "computes each statistic one way")                                        \
  X(kTensorSection, file_format, kChecked,                                    \
    "tprobe writes .npy files ('bin' is MindSpore static graph's)")           \
  X(kTensorSection, bench_path, kIgnored, kDiffCheckWhy)                      \
  X(kOverflowCheckSection, overflow_nums, kActed, "")                         \
  X(kOverflowCheckSection, check_mode, kChecked,                              \
    "it is MindSpore static graph's (before 2.3); tprobe checks every "       \
    "dumped call's outputs")                                                  \
  X(kOverflowCheckSection, summary_mode, kIgnored,                            \
    "the overflow_check task writes statistics")                              \
  X(kStructureSection, summary_mode, kIgnored,                                \
    "the structure task dumps no data")
// clang-format on

// A rule with the sections it holds in: a row of a table that spans every
// section, from which each section's own KeyRules are taken in row order.
struct SectionRule {
  uint32_t sections;
  KeyRule rule;
};

// The rules of `table` that hold in section `section` (one bit of
// Sections), in table order. Evaluated at compile time, into a table of
// exactly that many rules.
template <uint32_t section, size_t N>
constexpr size_t CountRules(const SectionRule (&table)[N]) {
  size_t n = 0;
  for (const SectionRule& row : table) n += (row.sections & section) != 0;
  return n;
}
template <uint32_t section, size_t M, size_t N>
constexpr std::array<KeyRule, M> RulesOf(const SectionRule (&table)[N]) {
  std::array<KeyRule, M> out{};
  size_t i = 0;
  for (const SectionRule& row : table) {
    if ((row.sections & section) != 0) out[i++] = row.rule;
  }
  return out;
}

using KeyRules = std::span<const KeyRule>;

// The top-level keys.
KeyRules TopLevelKeys();

// The keys of the section of task `task_name` ("statistics", "tensor",
// "overflow_check", "structure"); empty for any other name.
KeyRules SectionKeys(std::string_view task_name);

// The rule for `key` in `rules`, or nullptr when the key is unknown.
const KeyRule* FindRule(KeyRules rules, std::string_view key);

// The known key nearest to `key` (at most two edits: insertions, deletions,
// substitutions or swaps of neighbours), or empty when none is that near.
// Refused keys are never suggested.
std::string_view NearestKey(KeyRules rules, std::string_view key);

// The msprobe tasks tprobe does not run, each with a sentence that says so
// (for the task's error message); nullptr for any other task name.
const char* UnsupportedTaskReason(std::string_view task);

// The msprobe levels tprobe does not run (L2), likewise.
const char* UnsupportedLevelReason(std::string_view level);

}  // namespace tprobe::config

#endif  // TPROBE_COMMON_CONFIG_MSPROBE_KEYS_H_
