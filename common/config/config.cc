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

#include "common/config/msprobe_keys.h"

namespace tprobe::config {
namespace {

// Ordered, so that keys are checked (and warned about) in the file's order.
using Json = nlohmann::ordered_json;
using Keys = std::span<const std::string_view>;
using Warnings = std::vector<std::string>;

constexpr std::string_view kPrefix = "config: ";

// The name config.json gives each value of the config's enums: the one
// table that parsing and writing a config both read. The first row is what
// a value outside the enum is written as.
template <typename E>
struct Named {
  E value;
  std::string_view name;
};
constexpr Named<Task> kTaskNames[] = {{Task::kStatistics, "statistics"},
                                      {Task::kTensor, "tensor"},
                                      {Task::kOverflowCheck, "overflow_check"},
                                      {Task::kStructure, "structure"}};
constexpr Named<Level> kLevelNames[] = {{Level::kL1, "L1"},
                                        {Level::kL0, "L0"},
                                        {Level::kMix, "mix"},
                                        {Level::kDebug, "debug"}};
constexpr Named<RiskLevel> kRiskLevelNames[] = {{RiskLevel::kFocus, "FOCUS"},
                                                {RiskLevel::kCore, "CORE"},
                                                {RiskLevel::kAll, "ALL"}};
constexpr Named<SummaryMode> kSummaryModeNames[] = {
    {SummaryMode::kStatistics, "statistics"},
    {SummaryMode::kMd5, "md5"},
    {SummaryMode::kXor, "xor"}};
constexpr Named<FullRingPolicy> kPolicyNames[] = {
    {FullRingPolicy::kBlock, "block"}, {FullRingPolicy::kDrop, "drop"}};

template <typename E, size_t N>
std::string_view NameOf(const Named<E> (&table)[N], E value) {
  for (const auto& row : table) {
    if (row.value == value) return row.name;
  }
  return table[0].name;
}

// The value `v` names; nullopt when `v` is no string or names none.
template <typename E, size_t N>
std::optional<E> ValueNamed(const Named<E> (&table)[N], const Json& v) {
  if (!v.is_string()) return std::nullopt;
  for (const auto& row : table) {
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
// is "" at the top level and "section." in a task section.
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

// Parses one range boundary: decimal digits only. Values above kStepRankMax
// come back as kStepRankMax + 1, so overlong strings cannot overflow.
std::optional<int64_t> ParseBoundary(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = std::min(value * 10 + (c - '0'), kStepRankMax + 1);
  }
  return value;
}

// msprobe's get_real_step_or_rank: a list of ints and "a-b" strings, expanded,
// deduplicated and sorted. Ranges are merged before expansion, so the work is
// bounded by kStepRankMax whatever the input holds.
Status ParseStepsOrRanks(const Json& value, std::string_view name,
                         std::vector<int64_t>* out) {
  const std::string obj(name);
  if (!value.is_array()) {
    return Invalid(obj + " is invalid, it should be a list");
  }
  if (value.size() > static_cast<size_t>(kStepRankMax)) {
    return Invalid(obj + " is invalid, its length cannot exceed " +
                   std::to_string(kStepRankMax));
  }
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const Json& element : value) {
    if (element.is_number_integer()) {
      int64_t v = SaturatedInt(element);
      if (v < 0 || v > kStepRankMax) {
        return Invalid("Each element of " + obj + " must be between 0 and " +
                       std::to_string(kStepRankMax) + ", currently it is " +
                       element.dump() + ".");
      }
      ranges.emplace_back(v, v);
      continue;
    }
    if (!element.is_string()) {
      return Invalid(obj + " element " + element.dump() +
                     " must be an integer or string.");
    }
    const std::string& text = element.get_ref<const std::string&>();
    const std::string now =
        " Now string parameter for " + obj + " is \"" + text + "\".";
    // msprobe 26.x: "3" is one value, "3-5" a range.
    size_t hyphen = text.find('-');
    if (hyphen != std::string::npos &&
        text.find('-', hyphen + 1) != std::string::npos) {
      return Invalid("The string parameter for " + obj +
                     " only supports formats like \"3\" or \"3-5\"." + now);
    }
    std::optional<int64_t> left, right;
    if (hyphen == std::string::npos) {
      left = right = ParseBoundary(text);
      if (!left) {
        return Invalid("The string parameter for " + obj +
                       " only supports formats like \"3\" or \"3-5\"." + now);
      }
    } else {
      left = ParseBoundary(text.substr(0, hyphen));
      right = ParseBoundary(text.substr(hyphen + 1));
    }
    if (!left || !right) {
      return Invalid("The hyphen(-) must start and end with decimal numbers." +
                     now);
    }
    if (*left > kStepRankMax || *right > kStepRankMax) {
      return Invalid("The boundaries must fall within the range of [0, " +
                     std::to_string(kStepRankMax) + "]." + now);
    }
    if (*left > *right) {
      return Invalid("For " + obj + ", the left boundary (" +
                     std::to_string(*left) +
                     ") cannot be greater than the right boundary (" +
                     std::to_string(*right) + ").");
    }
    ranges.emplace_back(*left, *right);
  }
  std::sort(ranges.begin(), ranges.end());
  out->clear();
  for (const auto& [first, last] : ranges) {
    int64_t from = out->empty() ? first : std::max(first, out->back() + 1);
    for (int64_t v = from; v <= last; ++v) out->push_back(v);
  }
  return Status::Ok();
}

Status ParseStringList(const Json& value, std::string_view name,
                       std::vector<std::string>* out) {
  const std::string message =
      std::string(name) + " is invalid, it should be a list[str]";
  if (!value.is_array()) return Invalid(message);
  out->clear();
  for (const Json& element : value) {
    if (!element.is_string()) return Invalid(message);
    out->push_back(element.get<std::string>());
  }
  return Status::Ok();
}

Status ParseDataMode(const Json& value, DataMode* out) {
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

Status ParseTaskSection(const Json& section, std::string_view name,
                        Config* config, Warnings* warnings) {
  if (!section.is_object()) {
    return Invalid(std::string(name) + " is invalid, it should be an object");
  }
  const std::string prefix = std::string(name) + ".";
  const KeyRules rules = SectionKeys(name);
  Status status = CheckKeys(section, prefix, rules, warnings);
  if (!status.ok()) return status;

  if (const Json* v = Find(section, "scope")) {
    status = ParseStringList(*v, "scope", &config->scope);
    if (!status.ok()) return status;
    if (!config->scope.empty() && config->scope.size() != 2) {
      return Invalid(
          "scope is invalid, it should be empty or hold exactly 2 names "
          "[start, end], currently it holds " +
          std::to_string(config->scope.size()));
    }
  }
  if (const Json* v = Find(section, "list")) {
    status = ParseStringList(*v, "list", &config->list);
    if (!status.ok()) return status;
  }
  if (const Json* v = Find(section, "data_mode")) {
    status = ParseDataMode(*v, &config->data_mode);
    if (!status.ok()) return status;
  }
  // The statistics and tensor tasks read summary_mode (in the other
  // sections CheckKeys warned that it has no effect).
  const Json* summary_mode = Find(section, "summary_mode");
  if (summary_mode != nullptr &&
      (config->task == Task::kStatistics || config->task == Task::kTensor)) {
    if (auto mode = ValueNamed(kSummaryModeNames, *summary_mode)) {
      config->summary_mode = *mode;
    } else if (summary_mode->is_array()) {
      return Invalid(
          "summary_mode is invalid: a list of statistics is MindSpore static "
          "graph's; tprobe takes one of ['statistics', 'md5', 'xor']");
    } else {
      return Invalid(
          "summary_mode is invalid, summary_mode is not in ['statistics', "
          "'md5', 'xor'].");
    }
  }
  if (const Json* v = Find(section, "tensor_list")) {
    std::vector<std::string> tensor_list;
    status = ParseStringList(*v, "tensor_list", &tensor_list);
    if (!status.ok()) return status;
    if (!tensor_list.empty()) {
      return Invalid(
          "tensor_list is not supported by tprobe yet; leave it empty (use "
          "the tensor task to save tensors)");
    }
  }
  if (const Json* v = Find(section, "file_format")) {
    if (*v != "npy" && *v != "bin") {
      return Invalid("file_format is invalid, it should be one of [npy, bin]");
    }
    if (*v == "bin") WarnChecked(rules, prefix, "file_format", warnings);
  }
  if (const Json* v = Find(section, "overflow_nums")) {
    if (!v->is_number_integer()) {
      return Invalid("overflow_nums is invalid, it should be an integer");
    }
    int64_t n = SaturatedInt(*v);
    if (n != -1 && n <= 0) {
      return Invalid("overflow_nums should be -1 or positive integer");
    }
    config->overflow_nums = n;
  }
  if (const Json* v = Find(section, "check_mode")) {
    if (*v != "all" && *v != "aicore" && *v != "atomic") {
      return Invalid(
          "check_mode is invalid, it should be one of [all, aicore, atomic]");
    }
    if (*v != "all") WarnChecked(rules, prefix, "check_mode", warnings);
  }
  return Status::Ok();
}

// An integer in [lo, hi], or an error naming tprobe.`key` and the range.
Status ParseBoundedInt(const Json& section, std::string_view key, int64_t lo,
                       int64_t hi, int64_t* out) {
  const Json* v = Find(section, key);
  if (v == nullptr) return Status::Ok();
  std::string message = "tprobe." + std::string(key) +
                        " is invalid, it should be an integer between " +
                        std::to_string(lo) + " and " + std::to_string(hi);
  if (!v->is_number_integer()) return Invalid(message);
  int64_t n = SaturatedInt(*v);
  if (n < lo || n > hi) {
    return Invalid(message + ", currently it is " + v->dump());
  }
  *out = n;
  return Status::Ok();
}

Status ParseTprobeSection(const Json& section, Config* config) {
  if (!section.is_object()) {
    return Invalid("tprobe is invalid, it should be an object");
  }
  static constexpr KeyRule kTprobeKeys[] = {
      {"socket", KeyUse::kActed, ""},
      {"ring_bytes", KeyUse::kActed, ""},
      {"ring_count", KeyUse::kActed, ""},
      {"policy", KeyUse::kActed, ""},
      {"block_timeout_ms", KeyUse::kActed, ""},
      {"exit_timeout_ms", KeyUse::kActed, ""},
      {"statistics_on", KeyUse::kActed, ""}};
  Warnings none;
  Status status = CheckKeys(section, "tprobe.", kTprobeKeys, &none);
  if (!status.ok()) return status;

  if (const Json* v = Find(section, "socket")) {
    if (!v->is_string()) {
      return Invalid("tprobe.socket is invalid, it should be a string");
    }
    std::string socket = v->get<std::string>();
    if (socket.size() > kMaxSocketPathBytes) {
      return Invalid(
          "tprobe.socket is invalid, a Unix socket path holds at "
          "most " +
          std::to_string(kMaxSocketPathBytes) + " bytes, currently it has " +
          std::to_string(socket.size()));
    }
    config->socket = std::move(socket);
  }
  int64_t n = static_cast<int64_t>(config->ring_bytes);
  status =
      ParseBoundedInt(section, "ring_bytes", kMinRingBytes, kMaxRingBytes, &n);
  if (!status.ok()) return status;
  if ((n & (n - 1)) != 0) {
    return Invalid(
        "tprobe.ring_bytes is invalid, it should be a power of two, currently "
        "it is " +
        std::to_string(n));
  }
  config->ring_bytes = static_cast<uint64_t>(n);

  n = config->ring_count;
  status = ParseBoundedInt(section, "ring_count", 1, kMaxRingCount, &n);
  if (!status.ok()) return status;
  config->ring_count = static_cast<uint32_t>(n);

  if (const Json* v = Find(section, "policy")) {
    if (auto policy = ValueNamed(kPolicyNames, *v)) {
      config->policy = *policy;
    } else {
      return Invalid(
          "tprobe.policy is invalid, it should be one of [drop, "
          "block]");
    }
  }

  n = config->block_timeout_ms;
  status = ParseBoundedInt(section, "block_timeout_ms", 0,
                           std::numeric_limits<uint32_t>::max(), &n);
  if (!status.ok()) return status;
  config->block_timeout_ms = static_cast<uint32_t>(n);

  n = config->exit_timeout_ms;
  status =
      ParseBoundedInt(section, "exit_timeout_ms", 0, kMaxExitTimeoutMs, &n);
  if (!status.ok()) return status;
  config->exit_timeout_ms = static_cast<uint32_t>(n);

  if (const Json* v = Find(section, "statistics_on")) {
    if (*v == "auto") {
      config->statistics_on = StatisticsOn::kAuto;
    } else if (*v == "framework") {
      config->statistics_on = StatisticsOn::kFramework;
    } else if (*v == "daemon") {
      config->statistics_on = StatisticsOn::kDaemon;
    } else {
      return Invalid(
          "tprobe.statistics_on is invalid, it should be one of [auto, "
          "framework, daemon]");
    }
  }
  return Status::Ok();
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

Status ParseRoot(const Json& root, Config* config, Warnings* warnings) {
  if (!root.is_object()) {
    return Invalid("the top level must be a JSON object, not " +
                   std::string(root.type_name()));
  }
  const KeyRules rules = TopLevelKeys();
  Status status = CheckKeys(root, "", rules, warnings);
  if (!status.ok()) return status;

  if (const Json* v = Find(root, "task")) {
    if (auto task = ValueNamed(kTaskNames, *v)) {
      config->task = *task;
    } else {
      std::string message =
          "task is invalid, it should be one of [statistics, tensor, "
          "overflow_check, structure]";
      if (const char* why =
              v->is_string()
                  ? UnsupportedTaskReason(v->get_ref<const std::string&>())
                  : nullptr) {
        message += " (" + std::string(why) + ")";
      }
      return Invalid(message);
    }
  }
  if (const Json* v = Find(root, "dump_path")) {
    if (!v->is_string()) {
      return Invalid("dump_path is invalid, it should be a string");
    }
    if (v->get_ref<const std::string&>().empty()) {
      return Invalid("dump_path is invalid, it should not be empty");
    }
    config->dump_path = v->get<std::string>();
  }
  if (const Json* v = Find(root, "rank")) {
    status = ParseStepsOrRanks(*v, "rank", &config->ranks);
    if (!status.ok()) return status;
  }
  if (const Json* v = Find(root, "step")) {
    status = ParseStepsOrRanks(*v, "step", &config->steps);
    if (!status.ok()) return status;
  }
  if (const Json* v = Find(root, "level")) {
    if (auto level = ValueNamed(kLevelNames, *v)) {
      config->level = *level;
    } else {
      std::string message =
          "level is invalid, it should be one of [L0, L1, mix, debug]";
      if (const char* why =
              v->is_string()
                  ? UnsupportedLevelReason(v->get_ref<const std::string&>())
                  : nullptr) {
        message += " (" + std::string(why) + ")";
      }
      return Invalid(message);
    }
  }
  // msprobe's dynamic control: the adapter re-reads config.json while it
  // is there (tprobe/_common/dump_enable.py); here it is only checked.
  if (const Json* v = Find(root, "dump_enable")) {
    if (!v->is_boolean()) {
      return Invalid("dump_enable is invalid, it should be a boolean");
    }
  }
  if (const Json* v = Find(root, "enable_dataloader")) {
    if (!v->is_boolean()) {
      return Invalid("enable_dataloader is invalid, it should be a boolean");
    }
    if (*v == true) WarnChecked(rules, "", "enable_dataloader", warnings);
  }
  // tprobe is always asynchronous: the daemon does what async_dump moves
  // off the training thread, so either value means the same.
  if (const Json* v = Find(root, "async_dump")) {
    if (!v->is_boolean()) {
      return Invalid("async_dump is invalid, it should be a boolean");
    }
  }
  if (const Json* v = Find(root, "extra_info")) {
    if (!v->is_boolean()) {
      return Invalid("extra_info is invalid, it should be a boolean");
    }
    if (*v == false) WarnChecked(rules, "", "extra_info", warnings);
  }
  // msprobe 26.x reads a missing risk_level as "FOCUS", and null or "" as
  // "ALL".
  // (Find would read null as missing.)
  if (auto v = root.find("risk_level"); v != root.end()) {
    if (v->is_null() || *v == "") {
      config->risk_level = RiskLevel::kAll;
    } else if (auto risk_level = ValueNamed(kRiskLevelNames, *v)) {
      config->risk_level = *risk_level;
    } else {
      return Invalid(
          "risk_level is invalid, it should be one of ['CORE', 'FOCUS', "
          "'ALL']");
    }
  }
  if (const Json* v = Find(root, "precision")) {
    if (*v != "low" && *v != "high") {
      return Invalid(
          "precision is invalid, it should be one of ['low', 'high']");
    }
    if (*v == "high") WarnChecked(rules, "", "precision", warnings);
  }
  const std::string_view task_name = TaskName(config->task);
  if (const Json* v = Find(root, task_name)) {
    status = ParseTaskSection(*v, task_name, config, warnings);
    if (!status.ok()) return status;
  }
  if (const Json* v = Find(root, "tprobe")) {
    status = ParseTprobeSection(*v, config);
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

std::string_view SummaryModeName(SummaryMode mode) {
  return NameOf(kSummaryModeNames, mode);
}

std::string_view PolicyName(FullRingPolicy policy) {
  return NameOf(kPolicyNames, policy);
}

// Sorted values with each run of consecutive ones written as "a-b", so that
// even every step in [0, kStepRankMax] stays one short string.
nlohmann::ordered_json RangesJson(const std::vector<int64_t>& values) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
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

Json DataModeJson(const DataMode& mode) {
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

}  // namespace

std::string_view StatisticsOnName(StatisticsOn on) {
  switch (on) {
    case StatisticsOn::kFramework:
      return "framework";
    case StatisticsOn::kDaemon:
      return "daemon";
    case StatisticsOn::kAuto:
      break;
  }
  return "auto";
}

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

Result<Config> LoadConfigFile(const std::string& path,
                              std::vector<std::string>* warnings) {
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
}

std::string ToJson(const Config& config) {
  using Ordered = nlohmann::ordered_json;
  Ordered root;
  root["task"] = TaskName(config.task);
  root["dump_path"] = config.dump_path;
  root["rank"] = RangesJson(config.ranks);
  root["step"] = RangesJson(config.steps);
  root["level"] = LevelName(config.level);
  root["risk_level"] = RiskLevelName(config.risk_level);

  Ordered section;
  section["scope"] = config.scope;
  section["list"] = config.list;
  section["data_mode"] = DataModeJson(config.data_mode);
  if (config.task == Task::kStatistics || config.task == Task::kTensor) {
    section["summary_mode"] = SummaryModeName(config.summary_mode);
  } else if (config.task == Task::kOverflowCheck) {
    section["overflow_nums"] = config.overflow_nums;
  }
  root[std::string(TaskName(config.task))] = std::move(section);

  Ordered& tprobe = root["tprobe"];
  tprobe["socket"] = config.socket;
  tprobe["ring_bytes"] = config.ring_bytes;
  tprobe["ring_count"] = config.ring_count;
  tprobe["policy"] = PolicyName(config.policy);
  tprobe["block_timeout_ms"] = config.block_timeout_ms;
  tprobe["exit_timeout_ms"] = config.exit_timeout_ms;
  tprobe["statistics_on"] = StatisticsOnName(config.statistics_on);
  // Strings in a valid Config are UTF-8; replacing bad bytes keeps dump()
  // from throwing for one that is not.
  return root.dump(1, ' ', false, Json::error_handler_t::replace);
}

bool StepSelected(const Config& config, int64_t step) {
  return config.steps.empty() ||
         std::binary_search(config.steps.begin(), config.steps.end(), step);
}

bool RankSelected(const Config& config, int64_t rank) {
  return rank == -1 || config.ranks.empty() ||
         std::binary_search(config.ranks.begin(), config.ranks.end(), rank);
}

std::optional<int64_t> LastStep(const Config& config) {
  if (config.steps.empty()) return std::nullopt;
  return config.steps.back();
}

bool DataModeSelected(const DataMode& mode, bool forward, bool input) {
  return (forward ? mode.forward : mode.backward) &&
         (input ? mode.input : mode.output);
}

std::string_view TaskName(Task task) { return NameOf(kTaskNames, task); }

std::string_view LevelName(Level level) { return NameOf(kLevelNames, level); }

std::string_view RiskLevelName(RiskLevel risk_level) {
  return NameOf(kRiskLevelNames, risk_level);
}

}  // namespace tprobe::config
