#include "common/config/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <utility>

#include "common/config/config_keys.h"
#include "common/config/msprobe_keys.h"

namespace tprobe::config {
namespace {

// Ordered, so that keys are checked (and warned about) in the file's order.
using Json = nlohmann::ordered_json;
using Keys = std::span<const std::string_view>;
using Warnings = std::vector<std::string>;

constexpr std::string_view kPrefix = "config: ";

// Every key of TPROBE_CONFIG_KEYS outside the "tprobe" section is one that
// msprobe's config.json has, and msprobe_keys.h lists it as acted on or
// checked in each section the row names.
constexpr SectionRule kMsprobeRows[] = {
#define TPROBE_MSPROBE_ROW_(sections, key, use, why) \
  {sections, {#key, KeyUse::use, why}},
    TPROBE_MSPROBE_KEYS(TPROBE_MSPROBE_ROW_)
#undef TPROBE_MSPROBE_ROW_
};
constexpr bool ListedByMsprobe(uint32_t sections, std::string_view key) {
  if (sections == kTprobeSection) return true;
  for (uint32_t bit = 1; bit <= kTopLevel; bit <<= 1) {
    if ((sections & bit) == 0) continue;
    bool listed = false;
    for (const SectionRule& row : kMsprobeRows) {
      listed |=
          (row.sections & bit) != 0 && row.rule.key == key &&
          (row.rule.use == KeyUse::kActed || row.rule.use == KeyUse::kChecked);
    }
    if (!listed) return false;
  }
  return true;
}
#define TPROBE_ASSERT_LISTED_(sections, key, ...) \
  static_assert(ListedByMsprobe(sections, #key),  \
                #key " is missing from TPROBE_MSPROBE_KEYS");
TPROBE_CONFIG_KEYS(TPROBE_ASSERT_LISTED_, TPROBE_ASSERT_LISTED_)
#undef TPROBE_ASSERT_LISTED_

// The "tprobe" section's rules: its rows of TPROBE_CONFIG_KEYS, all acted
// on.
constexpr SectionRule kConfigRows[] = {
#define TPROBE_CONFIG_ROW_(sections, key, ...) \
  {sections, {#key, KeyUse::kActed, ""}},
    TPROBE_CONFIG_KEYS(TPROBE_CONFIG_ROW_, TPROBE_CONFIG_ROW_)
#undef TPROBE_CONFIG_ROW_
};
constexpr auto kTprobeRules =
    RulesOf<kTprobeSection, CountRules<kTprobeSection>(kConfigRows)>(
        kConfigRows);

// The value `v` names; nullopt when `v` is no string or names none.
template <typename E>
std::optional<E> ValueNamed(const Json& v) {
  if (!v.is_string()) return std::nullopt;
  for (const auto& row : EnumNames<E>::kNames) {
    if (v.get_ref<const std::string&>() == row.name) return row.value;
  }
  return std::nullopt;
}

// Internal errors carry the message without kPrefix; the public functions add
// it (and the path, for LoadConfigFile).
Status Invalid(std::string message) {
  return Status::Error(std::move(message));
}

bool Contains(Keys keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// One warning line: "config: <key> has no effect: <why>".
void Warn(Warnings* warnings, const std::string& key, std::string_view why) {
  warnings->push_back(std::string(kPrefix) + key +
                      " has no effect: " + std::string(why));
}

// The keys that may appear, as "[a, b, ...]": every known key but the
// refused ones.
std::string Allowed(KeyRules rules) {
  std::string out;
  for (const KeyRule& rule : rules) {
    if (rule.use == KeyUse::kRefused) continue;
    if (!out.empty()) out += ", ";
    out += rule.key;
  }
  return "[" + out + "]";
}

// Checks every key of `object` against `rules`: an unknown key is an error
// that suggests the nearest known one, a refused key an error that says
// what is not supported, and an ignored key (not null) a warning. `prefix`
// is "" at the top level and "section." in a section.
Status CheckKeys(const Json& object, const std::string& prefix, KeyRules rules,
                 Warnings* warnings) {
  for (const auto& [key, value] : object.items()) {
    const KeyRule* rule = FindRule(rules, key);
    if (rule == nullptr) {
      std::string where =
          prefix.empty()
              ? std::string("at the top level")
              : "in section '" + prefix.substr(0, prefix.size() - 1) + "'";
      std::string message = "unknown key '" + key + "' " + where;
      if (std::string_view near = NearestKey(rules, key); !near.empty()) {
        message += " (did you mean '" + std::string(near) + "'?)";
      }
      return Invalid(message + "; allowed keys are " + Allowed(rules));
    }
    if (rule->use == KeyUse::kRefused) {
      return Invalid(prefix + key + ": " + std::string(rule->why));
    }
    if (rule->use == KeyUse::kIgnored && !value.is_null()) {
      Warn(warnings, prefix + key, rule->why);
    }
  }
  return Status::Ok();
}

// Adds the warning for a checked key whose value tprobe does not honour.
void WarnChecked(KeyRules rules, const std::string& prefix,
                 std::string_view key, Warnings* warnings) {
  if (const KeyRule* rule = FindRule(rules, key)) {
    Warn(warnings, prefix + std::string(key), rule->why);
  }
}

// The value of `key`, or nullptr when it is absent or null.
const Json* Find(const Json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// The value of a KEY row of type `Type`, or nullptr when there is none to
// read. msprobe 26.x reads a null risk_level as "ALL", so only there null
// is a value.
template <typename Type>
const Json* ValueOf(const Json& object, std::string_view key, Type) {
  return Find(object, key);
}
const Json* ValueOf(const Json& object, std::string_view key, RiskName) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// A JSON integer (never a bool or float) as int64_t; unsigned values beyond
// int64_t saturate, which every range check here rejects.
int64_t SaturatedInt(const Json& value) {
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    constexpr auto kMax = std::numeric_limits<int64_t>::max();
    return u > static_cast<uint64_t>(kMax) ? kMax : static_cast<int64_t>(u);
  }
  return value.get<int64_t>();
}

// Parses one range boundary: decimal digits only. Values above `max` come
// back as max + 1, so overlong strings cannot overflow.
std::optional<int64_t> ParseBoundary(std::string_view text, int64_t max) {
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = std::min(value * 10 + (c - '0'), max + 1);
  }
  return value;
}

// One string element of a rank or step list, "3" or "3-5", as the range
// [first, last] within [0, max].
Result<std::pair<int64_t, int64_t>> ParseRangeText(const std::string& text,
                                                   const std::string& obj,
                                                   int64_t max) {
  const std::string now =
      " Now string parameter for " + obj + " is \"" + text + "\".";
  const std::string formats = "The string parameter for " + obj +
                              " only supports formats like \"3\" or \"3-5\"." +
                              now;
  // msprobe 26.x: "3" is one value, "3-5" a range.
  size_t hyphen = text.find('-');
  if (hyphen != std::string::npos &&
      text.find('-', hyphen + 1) != std::string::npos) {
    return Invalid(formats);
  }
  std::optional<int64_t> left, right;
  if (hyphen == std::string::npos) {
    left = right = ParseBoundary(text, max);
    if (!left) return Invalid(formats);
  } else {
    left = ParseBoundary(text.substr(0, hyphen), max);
    right = ParseBoundary(text.substr(hyphen + 1), max);
  }
  if (!left || !right) {
    return Invalid("The hyphen(-) must start and end with decimal numbers." +
                   now);
  }
  if (*left > max || *right > max) {
    return Invalid("The boundaries must fall within the range of [0, " +
                   std::to_string(max) + "]." + now);
  }
  if (*left > *right) {
    return Invalid("For " + obj + ", the left boundary (" +
                   std::to_string(*left) +
                   ") cannot be greater than the right boundary (" +
                   std::to_string(*right) + ").");
  }
  return std::pair{*left, *right};
}

// The handling of each value type of TPROBE_CONFIG_KEYS: ParseValue reads
// a JSON value into the member (or returns the error that names the key),
// WriteValue writes the member as ToJson does, and DescribeValue says what
// the value may be, for docs/configuration.md.

// What msprobe says of a task or level that tprobe does not run; nullptr for
// the other enums.
const char* Unsupported(Task, std::string_view name) {
  return UnsupportedTaskReason(name);
}
const char* Unsupported(Level, std::string_view name) {
  return UnsupportedLevelReason(name);
}
template <typename E>
const char* Unsupported(E, std::string_view) {
  return nullptr;
}

template <typename E>
Status ParseValue(EnumName, const Json& v, const KeySpec& spec, E* out) {
  if (auto value = ValueNamed<E>(v)) {
    *out = *value;
    return Status::Ok();
  }
  std::string message = spec.Name() + " is invalid, it should be one of " +
                        std::string(EnumNames<E>::kChoices);
  if (const char* why = v.is_string()
                            ? Unsupported(E{}, v.get_ref<const std::string&>())
                            : nullptr) {
    message += " (" + std::string(why) + ")";
  }
  return Invalid(message);
}
template <typename E>
Json WriteValue(EnumName, E value) {
  return NameOf(value);
}
template <typename E>
std::string DescribeValue(EnumName, const KeySpec&, E) {
  return "one of " + std::string(EnumNames<E>::kChoices);
}

// msprobe 26.x reads a missing risk_level as "FOCUS", and null or "" as
// "ALL".
Status ParseValue(RiskName, const Json& v, const KeySpec& spec,
                  RiskLevel* out) {
  if (v.is_null() || v == "") {
    *out = RiskLevel::kAll;
    return Status::Ok();
  }
  return ParseValue(EnumName{}, v, spec, out);
}
Json WriteValue(RiskName, RiskLevel value) { return NameOf(value); }
std::string DescribeValue(RiskName, const KeySpec& spec, RiskLevel value) {
  return DescribeValue(EnumName{}, spec, value) + ", null or \"\" (ALL)";
}

// msprobe's messages for summary_mode.
Status ParseValue(SummaryName, const Json& v, const KeySpec&,
                  SummaryMode* out) {
  const std::string choices(EnumNames<SummaryMode>::kChoices);
  if (auto mode = ValueNamed<SummaryMode>(v)) {
    *out = *mode;
  } else if (v.is_array()) {
    return Invalid(
        "summary_mode is invalid: a list of statistics is MindSpore static "
        "graph's; tprobe takes one of " +
        choices);
  } else {
    return Invalid("summary_mode is invalid, summary_mode is not in " +
                   choices + ".");
  }
  return Status::Ok();
}
Json WriteValue(SummaryName, SummaryMode value) { return NameOf(value); }
std::string DescribeValue(SummaryName, const KeySpec& spec, SummaryMode value) {
  return DescribeValue(EnumName{}, spec, value);
}

Status ParseValue(DumpPath, const Json& v, const KeySpec& spec,
                  std::string* out) {
  if (!v.is_string()) {
    return Invalid(spec.Name() + " is invalid, it should be a string");
  }
  if (v.get_ref<const std::string&>().empty()) {
    return Invalid(spec.Name() + " is invalid, it should not be empty");
  }
  *out = v.get<std::string>();
  return Status::Ok();
}
Json WriteValue(DumpPath, const std::string& value) { return value; }
std::string DescribeValue(DumpPath, const KeySpec&, const std::string&) {
  return "a path, not empty";
}

Status ParseValue(SocketPath, const Json& v, const KeySpec& spec,
                  std::string* out) {
  if (!v.is_string()) {
    return Invalid(spec.Name() + " is invalid, it should be a string");
  }
  const std::string& socket = v.get_ref<const std::string&>();
  if (socket.size() > static_cast<size_t>(spec.hi)) {
    return Invalid(spec.Name() +
                   " is invalid, a Unix socket path holds at most " +
                   std::to_string(spec.hi) + " bytes, currently it has " +
                   std::to_string(socket.size()));
  }
  *out = socket;
  return Status::Ok();
}
Json WriteValue(SocketPath, const std::string& value) { return value; }
std::string DescribeValue(SocketPath, const KeySpec& spec, const std::string&) {
  return "a Unix socket path of at most " + std::to_string(spec.hi) +
         " bytes; empty: the default";
}

// msprobe's get_real_step_or_rank: a list of ints and "a-b" strings, expanded,
// deduplicated and sorted. Ranges are merged before expansion, so the work is
// bounded by spec.hi whatever the input holds.
Status ParseValue(Ranges, const Json& value, const KeySpec& spec,
                  std::vector<int64_t>* out) {
  const std::string obj = spec.Name();
  const int64_t max = spec.hi;
  if (!value.is_array()) {
    return Invalid(obj + " is invalid, it should be a list");
  }
  if (value.size() > static_cast<size_t>(max)) {
    return Invalid(obj + " is invalid, its length cannot exceed " +
                   std::to_string(max));
  }
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const Json& element : value) {
    if (element.is_number_integer()) {
      int64_t v = SaturatedInt(element);
      if (v < 0 || v > max) {
        return Invalid("Each element of " + obj + " must be between 0 and " +
                       std::to_string(max) + ", currently it is " +
                       element.dump() + ".");
      }
      ranges.emplace_back(v, v);
      continue;
    }
    if (!element.is_string()) {
      return Invalid(obj + " element " + element.dump() +
                     " must be an integer or string.");
    }
    auto range =
        ParseRangeText(element.get_ref<const std::string&>(), obj, max);
    if (!range.ok()) return range.status();
    ranges.push_back(*range);
  }
  std::sort(ranges.begin(), ranges.end());
  out->clear();
  for (const auto& [first, last] : ranges) {
    int64_t from = out->empty() ? first : std::max(first, out->back() + 1);
    for (int64_t v = from; v <= last; ++v) out->push_back(v);
  }
  return Status::Ok();
}
// Sorted values with each run of consecutive ones written as "a-b", so that
// even every step in [0, kStepRankMax] stays one short string.
Json WriteValue(Ranges, const std::vector<int64_t>& values) {
  Json out = Json::array();
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    if (j == i) {
      out.push_back(values[i]);
    } else {
      out.push_back(std::to_string(values[i]) + "-" +
                    std::to_string(values[j]));
    }
    i = j + 1;
  }
  return out;
}
std::string DescribeValue(Ranges, const KeySpec& spec,
                          const std::vector<int64_t>&) {
  return "a list of integers and \"a-b\" ranges in [" +
         std::to_string(spec.lo) + ", " + std::to_string(spec.hi) +
         "]; empty: all";
}

Status ParseValue(Names, const Json& value, const KeySpec& spec,
                  std::vector<std::string>* out) {
  const std::string message =
      spec.Name() + " is invalid, it should be a list[str]";
  if (!value.is_array()) return Invalid(message);
  out->clear();
  for (const Json& element : value) {
    if (!element.is_string()) return Invalid(message);
    out->push_back(element.get<std::string>());
  }
  return Status::Ok();
}
Json WriteValue(Names, const std::vector<std::string>& value) { return value; }
std::string DescribeValue(Names, const KeySpec&,
                          const std::vector<std::string>&) {
  return "a list of strings";
}

Status ParseValue(Scope, const Json& value, const KeySpec& spec,
                  std::vector<std::string>* out) {
  Status status = ParseValue(Names{}, value, spec, out);
  if (!status.ok()) return status;
  if (!out->empty() && out->size() != 2) {
    return Invalid(spec.Name() +
                   " is invalid, it should be empty or hold exactly 2 names "
                   "[start, end], currently it holds " +
                   std::to_string(out->size()));
  }
  return Status::Ok();
}
Json WriteValue(Scope, const std::vector<std::string>& value) { return value; }
std::string DescribeValue(Scope, const KeySpec&,
                          const std::vector<std::string>&) {
  return "[] or [start, end]";
}

Status ParseValue(Modes, const Json& value, const KeySpec&, DataMode* out) {
  static constexpr std::string_view kModes[] = {"all", "input", "output",
                                                "forward", "backward"};
  if (!value.is_array()) {
    return Invalid("data_mode is invalid, it should be a list");
  }
  bool all = value.empty();
  bool forward = false, backward = false, input = false, output = false;
  for (const Json& element : value) {
    std::string_view mode = element.is_string()
                                ? element.get_ref<const std::string&>()
                                : std::string_view();
    if (!Contains(kModes, mode)) {
      std::string shown = element.is_string()
                              ? "'" + element.get<std::string>() + "'"
                              : element.dump();
      return Invalid("The element " + shown + " of data_mode " + value.dump() +
                     " is not in ['all','input','output','forward',"
                     "'backward'].");
    }
    all |= mode == "all";
    forward |= mode == "forward";
    backward |= mode == "backward";
    input |= mode == "input";
    output |= mode == "output";
  }
  if (all && value.size() > 1) {
    return Invalid("'all' cannot be combined with other options in data_mode.");
  }
  if (value.size() > 4) {
    // The typo "data_made" is msprobe's.
    return Invalid("The number of elements in the data_made cannot exceed 4.");
  }
  // A filter that the list does not mention lets everything through.
  if (all || (!forward && !backward)) forward = backward = true;
  if (all || (!input && !output)) input = output = true;
  *out = DataMode{forward, backward, input, output};
  return Status::Ok();
}
Json WriteValue(Modes, const DataMode& mode) {
  Json out = Json::array();
  if (!(mode.forward && mode.backward)) {
    if (mode.forward) out.push_back("forward");
    if (mode.backward) out.push_back("backward");
  }
  if (!(mode.input && mode.output)) {
    if (mode.input) out.push_back("input");
    if (mode.output) out.push_back("output");
  }
  if (out.empty()) out.push_back("all");
  return out;
}
std::string DescribeValue(Modes, const KeySpec&, const DataMode&) {
  return "a list of all, forward, backward, input, output";
}

Status ParseValue(OverflowCount, const Json& v, const KeySpec& spec,
                  int64_t* out) {
  if (!v.is_number_integer()) {
    return Invalid(spec.Name() + " is invalid, it should be an integer");
  }
  int64_t n = SaturatedInt(v);
  if (n != -1 && n <= 0) {
    return Invalid(spec.Name() + " should be -1 or positive integer");
  }
  *out = n;
  return Status::Ok();
}
Json WriteValue(OverflowCount, int64_t value) { return value; }
std::string DescribeValue(OverflowCount, const KeySpec&, int64_t) {
  return "-1 (no limit) or a positive integer";
}

// An integer in [spec.lo, spec.hi], or an error naming the key and the range.
template <typename T>
Status ParseValue(Integer, const Json& v, const KeySpec& spec, T* out) {
  std::string message =
      spec.Name() + " is invalid, it should be an integer between " +
      std::to_string(spec.lo) + " and " + std::to_string(spec.hi);
  if (!v.is_number_integer()) return Invalid(message);
  int64_t n = SaturatedInt(v);
  if (n < spec.lo || n > spec.hi) {
    return Invalid(message + ", currently it is " + v.dump());
  }
  *out = static_cast<T>(n);
  return Status::Ok();
}
template <typename T>
Json WriteValue(Integer, T value) {
  return value;
}
template <typename T>
std::string DescribeValue(Integer, const KeySpec& spec, T) {
  return "an integer in [" + std::to_string(spec.lo) + ", " +
         std::to_string(spec.hi) + "]";
}

template <typename T>
Status ParseValue(PowerOfTwo, const Json& v, const KeySpec& spec, T* out) {
  T n = 0;
  Status status = ParseValue(Integer{}, v, spec, &n);
  if (!status.ok()) return status;
  if ((n & (n - 1)) != 0) {
    return Invalid(spec.Name() +
                   " is invalid, it should be a power of two, currently it "
                   "is " +
                   std::to_string(n));
  }
  *out = n;
  return Status::Ok();
}
template <typename T>
Json WriteValue(PowerOfTwo, T value) {
  return value;
}
template <typename T>
std::string DescribeValue(PowerOfTwo, const KeySpec& spec, T) {
  return "a power of two in [" + std::to_string(spec.lo) + ", " +
         std::to_string(spec.hi) + "]";
}

// The checks of CHECK rows: an error, or whether the value asks for
// something tprobe does not do (then the key's warning follows).
Result<bool> Boolean(const Json& v, std::string_view key) {
  if (!v.is_boolean()) {
    return Invalid(std::string(key) + " is invalid, it should be a boolean");
  }
  return false;
}
Result<bool> BooleanWarnTrue(const Json& v, std::string_view key) {
  Result<bool> checked = Boolean(v, key);
  if (!checked.ok()) return checked;
  return v == true;
}
Result<bool> BooleanWarnFalse(const Json& v, std::string_view key) {
  Result<bool> checked = Boolean(v, key);
  if (!checked.ok()) return checked;
  return v == false;
}
// msprobe's top-level precision.
Result<bool> Precision(const Json& v, std::string_view) {
  if (v != "low" && v != "high") {
    return Invalid("precision is invalid, it should be one of ['low', 'high']");
  }
  return v == "high";
}
Result<bool> EmptyTensorList(const Json& v, std::string_view key) {
  std::vector<std::string> tensor_list;
  Status status = ParseValue(Names{}, v, KeySpec{key, 0, 0, 0}, &tensor_list);
  if (!status.ok()) return status;
  if (!tensor_list.empty()) {
    return Invalid(
        "tensor_list is not supported by tprobe yet; leave it empty (use "
        "the tensor task to save tensors)");
  }
  return false;
}
Result<bool> FileFormat(const Json& v, std::string_view) {
  if (v != "npy" && v != "bin") {
    return Invalid("file_format is invalid, it should be one of [npy, bin]");
  }
  return v == "bin";
}
Result<bool> CheckMode(const Json& v, std::string_view) {
  if (v != "all" && v != "aicore" && v != "atomic") {
    return Invalid(
        "check_mode is invalid, it should be one of [all, aicore, atomic]");
  }
  return v != "all";
}

// Reads the rows of TPROBE_CONFIG_KEYS that hold in `section` (one bit of
// Sections) from `object`, in table order, into `config`. `rules` and
// `prefix` are the section's, for the warnings of checked keys.
Status ParseKeys(const Json& object, uint32_t section, KeyRules rules,
                 const std::string& prefix, Config* config,
                 Warnings* warnings) {
#define TPROBE_PARSE_KEY_(sections, key, member, Type, lo, hi, live)          \
  if (((sections)&section) != 0) {                                            \
    if (const Json* v = ValueOf(object, #key, Type{})) {                      \
      Status status = ParseValue(Type{}, *v, KeySpec{#key, sections, lo, hi}, \
                                 &config->member);                            \
      if (!status.ok()) return status;                                        \
    }                                                                         \
  }
#define TPROBE_PARSE_CHECK_(sections, key, Check)            \
  if (((sections)&section) != 0) {                           \
    if (const Json* v = Find(object, #key)) {                \
      Result<bool> warn = Check(*v, #key);                   \
      if (!warn.ok()) return warn.status();                  \
      if (*warn) WarnChecked(rules, prefix, #key, warnings); \
    }                                                        \
  }
  TPROBE_CONFIG_KEYS(TPROBE_PARSE_KEY_, TPROBE_PARSE_CHECK_)
#undef TPROBE_PARSE_CHECK_
#undef TPROBE_PARSE_KEY_
  return Status::Ok();
}

// A section of config.json, named `name`: the task section or "tprobe".
Status ParseSection(const Json& object, std::string_view name, uint32_t section,
                    KeyRules rules, Config* config, Warnings* warnings) {
  if (!object.is_object()) {
    return Invalid(std::string(name) + " is invalid, it should be an object");
  }
  const std::string prefix = std::string(name) + ".";
  Status status = CheckKeys(object, prefix, rules, warnings);
  if (!status.ok()) return status;
  return ParseKeys(object, section, rules, prefix, config, warnings);
}

// Level debug (PrecisionDebugger.save() into debug.json) is written for
// tasks statistics and tensor (the tensors as .npy files, where msprobe
// writes .pt) with summary_mode statistics or md5.
Status CheckDebugLevel(const Config& config) {
  if (config.level != Level::kDebug) return Status::Ok();
  if (config.task != Task::kStatistics && config.task != Task::kTensor) {
    return Invalid("level debug is invalid with task " +
                   std::string(TaskName(config.task)) +
                   ", tprobe takes it with task statistics or tensor");
  }
  if (config.summary_mode == SummaryMode::kXor) {
    return Invalid(
        "level debug with summary_mode xor is not supported by tprobe; use "
        "statistics or md5");
  }
  return Status::Ok();
}

// The top level, then the section of the task it names (the other tasks'
// sections are not read, as msprobe does not read them), then "tprobe".
Status ParseRoot(const Json& root, Config* config, Warnings* warnings) {
  if (!root.is_object()) {
    return Invalid("the top level must be a JSON object, not " +
                   std::string(root.type_name()));
  }
  const KeyRules rules = TopLevelKeys();
  Status status = CheckKeys(root, "", rules, warnings);
  if (!status.ok()) return status;
  status = ParseKeys(root, kTopLevel, rules, "", config, warnings);
  if (!status.ok()) return status;
  const std::string_view task_name = TaskName(config->task);
  if (const Json* v = Find(root, task_name)) {
    status = ParseSection(*v, task_name, SectionOf(config->task),
                          SectionKeys(task_name), config, warnings);
    if (!status.ok()) return status;
  }
  if (const Json* v = Find(root, "tprobe")) {
    status = ParseSection(*v, "tprobe", kTprobeSection, kTprobeRules, config,
                          warnings);
    if (!status.ok()) return status;
  }
  return CheckDebugLevel(*config);
}

// ParseConfig without the message prefix. The one place where nlohmann_json
// exceptions are caught.
Result<Config> Parse(std::string_view json_text, Warnings* warnings) {
  try {
    Json root = Json::parse(json_text);
    Config config;
    Status status = ParseRoot(root, &config, warnings);
    if (!status.ok()) return status;
    return config;
  } catch (const Json::parse_error& e) {
    // what() is "[json.exception.parse_error.N] parse error at line L, ...".
    std::string_view what = e.what();
    if (size_t end = what.find("] "); end != std::string_view::npos) {
      what.remove_prefix(end + 2);
    }
    return Invalid("malformed JSON: " + std::string(what));
  } catch (const std::exception& e) {
    return Invalid(std::string("cannot parse: ") + e.what());
  }
}

// A value as a message quotes it: a string as it is, anything else as JSON.
std::string Text(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// Where a key appears, for the key table.
std::string Where(uint32_t sections) {
  if (sections == kTopLevel) return "top level";
  if (sections == kTprobeSection) return "`tprobe`";
  if (sections == kTaskSections) return "every task section";
  std::string out;
  for (const auto& row : EnumNames<Task>::kNames) {
    if ((sections & SectionOf(row.value)) == 0) continue;
    out += (out.empty() ? "`" : ", `") + std::string(row.name) + "`";
  }
  return out;
}

}  // namespace

std::string_view StatisticsOnName(StatisticsOn on) { return NameOf(on); }

Result<Config> ParseConfig(std::string_view json_text,
                           std::vector<std::string>* warnings) {
  Warnings found;
  Result<Config> result = Parse(json_text, &found);
  if (!result.ok()) {
    return Status::Error(std::string(kPrefix) + result.status().message());
  }
  if (warnings != nullptr) *warnings = std::move(found);
  return result;
}

// noexcept, as every function that tprobe._C calls
// (client/exception_boundary.h): an allocation that fails while reading is said
// as this file's error.
Result<Config> LoadConfigFile(const std::string& path,
                              std::vector<std::string>* warnings) noexcept try {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Status::Error(std::string(kPrefix) + "cannot open " + path + ": " +
                         std::strerror(errno));
  }
  std::string text;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    text.append(buffer, n);
  }
  const bool failed = std::ferror(file) != 0;
  const int read_errno = errno;
  std::fclose(file);
  if (failed) {
    return Status::Error(std::string(kPrefix) + "cannot read " + path + ": " +
                         std::strerror(read_errno));
  }
  Warnings found;
  Result<Config> result = Parse(text, &found);
  if (!result.ok()) {
    return Status::Error(std::string(kPrefix) + path + ": " +
                         result.status().message());
  }
  if (warnings != nullptr) *warnings = std::move(found);
  return result;
} catch (const std::exception& e) {
  return Status::Error(std::string(kPrefix) + path + ": " + e.what());
}

std::string ToJson(const Config& config) {
  Json root, section, tprobe;
  const uint32_t task = SectionOf(config.task);
#define TPROBE_WRITE_KEY_(sections, key, member, Type, lo, hi, live) \
  if ((sections) == kTopLevel) {                                     \
    root[#key] = WriteValue(Type{}, config.member);                  \
  } else if ((sections) == kTprobeSection) {                         \
    tprobe[#key] = WriteValue(Type{}, config.member);                \
  } else if (((sections)&task) != 0) {                               \
    section[#key] = WriteValue(Type{}, config.member);               \
  }
#define TPROBE_WRITE_CHECK_(sections, key, Check)
  TPROBE_CONFIG_KEYS(TPROBE_WRITE_KEY_, TPROBE_WRITE_CHECK_)
#undef TPROBE_WRITE_CHECK_
#undef TPROBE_WRITE_KEY_
  root[std::string(TaskName(config.task))] = std::move(section);
  root["tprobe"] = std::move(tprobe);
  // Strings in a valid Config are UTF-8; replacing bad bytes keeps dump()
  // from throwing for one that is not.
  return root.dump(1, ' ', false, Json::error_handler_t::replace);
}

std::optional<KeyChange> FixedKeyChange(const Config& running,
                                        const Config& next) {
#define TPROBE_FIXED_KEY_(sections, key, member, Type, lo, hi, live) \
  if (Live::live == Live::kFixed && running.member != next.member) { \
    return KeyChange{KeySpec{#key, sections, lo, hi}.Name(),         \
                     Text(WriteValue(Type{}, running.member)),       \
                     Text(WriteValue(Type{}, next.member))};         \
  }
#define TPROBE_FIXED_CHECK_(sections, key, Check)
  TPROBE_CONFIG_KEYS(TPROBE_FIXED_KEY_, TPROBE_FIXED_CHECK_)
#undef TPROBE_FIXED_CHECK_
#undef TPROBE_FIXED_KEY_
  return std::nullopt;
}

std::string KeyTableMarkdown() {
  const Config defaults;
  std::string out =
      "| Key | Where | Value | Default | Live |\n"
      "|---|---|---|---|---|\n";
#define TPROBE_DOC_KEY_(sections, key, member, Type, lo, hi, live)      \
  out += "| `" #key "` | " + Where(sections) + " | " +                  \
         DescribeValue(Type{}, KeySpec{#key, sections, lo, hi},         \
                       defaults.member) +                               \
         " | `" + WriteValue(Type{}, defaults.member).dump() + "` | " + \
         (Live::live == Live::kLive ? "yes" : "no") + " |\n";
#define TPROBE_DOC_CHECK_(sections, key, Check)
  TPROBE_CONFIG_KEYS(TPROBE_DOC_KEY_, TPROBE_DOC_CHECK_)
#undef TPROBE_DOC_CHECK_
#undef TPROBE_DOC_KEY_
  return out;
}

bool StepSelected(const Config& config, int64_t step) noexcept {
  return config.steps.empty() ||
         std::binary_search(config.steps.begin(), config.steps.end(), step);
}

bool RankSelected(const Config& config, int64_t rank) noexcept {
  return rank == -1 || config.ranks.empty() ||
         std::binary_search(config.ranks.begin(), config.ranks.end(), rank);
}

std::optional<int64_t> LastStep(const Config& config) noexcept {
  if (config.steps.empty()) return std::nullopt;
  return config.steps.back();
}

bool DataModeSelected(const DataMode& mode, bool forward, bool input) {
  return (forward ? mode.forward : mode.backward) &&
         (input ? mode.input : mode.output);
}

std::string_view TaskName(Task task) noexcept { return NameOf(task); }

std::string_view LevelName(Level level) noexcept { return NameOf(level); }

std::string_view RiskLevelName(RiskLevel risk_level) noexcept {
  return NameOf(risk_level);
}

}  // namespace tprobe::config
