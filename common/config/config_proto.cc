#include "common/config/config_proto.h"

#include <algorithm>
#include <optional>
#include <string>

namespace tprobe::config {
namespace {

Status Bad(const std::string& key, const std::string& why) {
  return Status::Error("config: " + key + " is invalid, " + why);
}

// Sorted, without duplicates, each in [0, kStepRankMax], as ParseConfig
// expands them.
Status CheckStepsOrRanks(const google::protobuf::RepeatedField<int64_t>& in,
                         const std::string& key, std::vector<int64_t>* out) {
  if (in.size() > kStepRankMax + 1) {
    return Bad(key, "it holds more than " + std::to_string(kStepRankMax + 1) +
                        " values");
  }
  for (int i = 0; i < in.size(); ++i) {
    if (in[i] < 0 || in[i] > kStepRankMax) {
      return Bad(key, "each value must be between 0 and " +
                          std::to_string(kStepRankMax) + ", one is " +
                          std::to_string(in[i]));
    }
    if (i > 0 && in[i] <= in[i - 1]) {
      return Bad(key, "its values must be sorted and distinct");
    }
  }
  out->assign(in.begin(), in.end());
  return Status::Ok();
}

// Each of the config's enums beside control.proto's, value for value: the
// one table both directions read.
template <typename Core, typename Proto>
struct Pair {
  Core core;
  Proto proto;
};
constexpr Pair<Task, v1::Config::Task> kTasks[] = {
    {Task::kStatistics, v1::Config::STATISTICS},
    {Task::kTensor, v1::Config::TENSOR},
    {Task::kOverflowCheck, v1::Config::OVERFLOW_CHECK},
    {Task::kStructure, v1::Config::STRUCTURE}};
constexpr Pair<Level, v1::Config::Level> kLevels[] = {
    {Level::kL0, v1::Config::L0},
    {Level::kL1, v1::Config::L1},
    {Level::kMix, v1::Config::MIX},
    {Level::kDebug, v1::Config::DEBUG}};
constexpr Pair<RiskLevel, v1::Config::RiskLevel> kRiskLevels[] = {
    {RiskLevel::kFocus, v1::Config::FOCUS},
    {RiskLevel::kCore, v1::Config::CORE},
    {RiskLevel::kAll, v1::Config::ALL}};
constexpr Pair<SummaryMode, v1::Config::SummaryMode> kSummaryModes[] = {
    {SummaryMode::kStatistics, v1::Config::SUMMARY_STATISTICS},
    {SummaryMode::kMd5, v1::Config::MD5},
    {SummaryMode::kXor, v1::Config::XOR}};
constexpr Pair<FullRingPolicy, v1::Config::Policy> kPolicies[] = {
    {FullRingPolicy::kBlock, v1::Config::BLOCK},
    {FullRingPolicy::kDrop, v1::Config::DROP}};

// The proto value of `core` (every core value has one).
template <typename Core, typename Proto, size_t N>
Proto ToProtoValue(const Pair<Core, Proto> (&table)[N], Core core) {
  for (const auto& pair : table) {
    if (pair.core == core) return pair.proto;
  }
  return table[0].proto;
}

// The core value of `proto`; nullopt for a value outside the table.
template <typename Core, typename Proto, size_t N>
std::optional<Core> FromProtoValue(const Pair<Core, Proto> (&table)[N],
                                   Proto proto) {
  for (const auto& pair : table) {
    if (pair.proto == proto) return pair.core;
  }
  return std::nullopt;
}

}  // namespace

v1::Config ToProto(const Config& config) {
  v1::Config m;
  m.set_task(ToProtoValue(kTasks, config.task));
  m.set_dump_path(config.dump_path);
  m.mutable_ranks()->Add(config.ranks.begin(), config.ranks.end());
  m.mutable_steps()->Add(config.steps.begin(), config.steps.end());
  m.set_level(ToProtoValue(kLevels, config.level));
  for (const std::string& s : config.scope) m.add_scope(s);
  for (const std::string& s : config.list) m.add_list(s);
  m.set_risk_level(ToProtoValue(kRiskLevels, config.risk_level));
  v1::Config::DataMode* mode = m.mutable_data_mode();
  mode->set_forward(config.data_mode.forward);
  mode->set_backward(config.data_mode.backward);
  mode->set_input(config.data_mode.input);
  mode->set_output(config.data_mode.output);
  m.set_summary_mode(ToProtoValue(kSummaryModes, config.summary_mode));
  m.set_overflow_nums(config.overflow_nums);
  m.set_socket(config.socket);
  m.set_ring_bytes(config.ring_bytes);
  m.set_ring_count(config.ring_count);
  m.set_policy(ToProtoValue(kPolicies, config.policy));
  m.set_block_timeout_ms(config.block_timeout_ms);
  m.set_exit_timeout_ms(config.exit_timeout_ms);
  m.set_statistics_on(static_cast<v1::Config::StatisticsOn>(
      static_cast<int>(config.statistics_on)));
  return m;
}

Result<Config> FromProto(const v1::Config& m) {
  Config c;
  if (auto task = FromProtoValue(kTasks, m.task())) {
    c.task = *task;
  } else {
    return Bad("task",
               "it should be one of [statistics, tensor, "
               "overflow_check, structure]");
  }
  if (m.dump_path().empty()) return Bad("dump_path", "it should not be empty");
  c.dump_path = m.dump_path();
  if (Status s = CheckStepsOrRanks(m.ranks(), "rank", &c.ranks); !s.ok()) {
    return s;
  }
  if (Status s = CheckStepsOrRanks(m.steps(), "step", &c.steps); !s.ok()) {
    return s;
  }
  if (auto level = FromProtoValue(kLevels, m.level())) {
    c.level = *level;
  } else {
    return Bad("level", "it should be one of [L0, L1, mix, debug]");
  }
  if (auto risk_level = FromProtoValue(kRiskLevels, m.risk_level())) {
    c.risk_level = *risk_level;
  } else {
    return Bad("risk_level", "it should be one of ['CORE', 'FOCUS', 'ALL']");
  }
  if (m.scope_size() != 0 && m.scope_size() != 2) {
    return Bad("scope", "it should be empty or hold exactly 2 names");
  }
  c.scope.assign(m.scope().begin(), m.scope().end());
  c.list.assign(m.list().begin(), m.list().end());
  const v1::Config::DataMode& mode = m.data_mode();
  c.data_mode =
      DataMode{mode.forward(), mode.backward(), mode.input(), mode.output()};
  if (!(mode.forward() || mode.backward()) ||
      !(mode.input() || mode.output())) {
    return Bad("data_mode", "it lets no direction or no side through");
  }
  const auto summary_mode = FromProtoValue(kSummaryModes, m.summary_mode());
  if (!summary_mode) {
    return Bad("summary_mode",
               "it should be one of ['statistics', 'md5', 'xor']");
  }
  if (*summary_mode != SummaryMode::kStatistics &&
      c.task != Task::kStatistics && c.task != Task::kTensor) {
    return Bad("summary_mode", "only the statistics and tensor tasks set it");
  }
  c.summary_mode = *summary_mode;
  if (m.overflow_nums() != -1 && m.overflow_nums() <= 0) {
    return Bad("overflow_nums", "it should be -1 or a positive integer");
  }
  if (c.task != Task::kOverflowCheck && m.overflow_nums() != 1) {
    return Bad("overflow_nums", "only the overflow_check task sets it");
  }
  c.overflow_nums = m.overflow_nums();
  if (m.socket().size() > kMaxSocketPathBytes) {
    return Bad("tprobe.socket", "a Unix socket path holds at most " +
                                    std::to_string(kMaxSocketPathBytes) +
                                    " bytes");
  }
  c.socket = m.socket();
  const uint64_t bytes = m.ring_bytes();
  if (bytes < kMinRingBytes || bytes > kMaxRingBytes ||
      (bytes & (bytes - 1)) != 0) {
    return Bad("tprobe.ring_bytes", "it should be a power of two between " +
                                        std::to_string(kMinRingBytes) +
                                        " and " +
                                        std::to_string(kMaxRingBytes));
  }
  c.ring_bytes = bytes;
  if (m.ring_count() < 1 || m.ring_count() > kMaxRingCount) {
    return Bad("tprobe.ring_count",
               "it should be between 1 and " + std::to_string(kMaxRingCount));
  }
  c.ring_count = m.ring_count();
  if (auto policy = FromProtoValue(kPolicies, m.policy())) {
    c.policy = *policy;
  } else {
    return Bad("tprobe.policy", "it should be one of [drop, block]");
  }
  c.block_timeout_ms = m.block_timeout_ms();
  if (m.exit_timeout_ms() > kMaxExitTimeoutMs) {
    return Bad("tprobe.exit_timeout_ms",
               "it should be at most " + std::to_string(kMaxExitTimeoutMs));
  }
  c.exit_timeout_ms = m.exit_timeout_ms();
  switch (m.statistics_on()) {
    case v1::Config::STATISTICS_ON_AUTO:
      c.statistics_on = StatisticsOn::kAuto;
      break;
    case v1::Config::STATISTICS_ON_FRAMEWORK:
      c.statistics_on = StatisticsOn::kFramework;
      break;
    case v1::Config::STATISTICS_ON_DAEMON:
      c.statistics_on = StatisticsOn::kDaemon;
      break;
    default:
      return Bad("tprobe.statistics_on",
                 "it should be one of [auto, framework, daemon]");
  }
  return c;
}

}  // namespace tprobe::config
