#ifndef TPROBE_COMMON_CONFIG_MSPROBE_KEYS_H_
#define TPROBE_COMMON_CONFIG_MSPROBE_KEYS_H_

// The keys of msprobe 26.2's config.json (and the older ones its docs still
// show) and what tprobe does with each: the tables that config.cc checks a
// file against and docs/msprobe-api.md lists for users.
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

struct KeyRule {
  std::string_view key;
  KeyUse use;
  // For kIgnored and kChecked: why the key has no effect, a clause that follows
  // "<key> has no effect: ". For kRefused: what is not supported, a sentence
  // that follows "<key>: ". Empty otherwise.
  std::string_view why;
};

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
