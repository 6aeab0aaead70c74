#include "common/config/config_proto.h"

#include <algorithm>
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

}  // namespace

v1::Config ToProto(const Config& config) {
  v1::Config m;
  switch (config.task) {
    case Task::kStatistics:
      m.set_task(v1::Config::STATISTICS);
      break;
    case Task::kTensor:
      m.set_task(v1::Config::TENSOR);
      break;
    case Task::kOverflowCheck:
      m.set_task(v1::Config::OVERFLOW_CHECK);
      break;
    case Task::kStructure:
      m.set_task(v1::Config::STRUCTURE);
      break;
  }
  m.set_dump_path(config.dump_path);
  m.mutable_ranks()->Add(config.ranks.begin(), config.ranks.end());
  m.mutable_steps()->Add(config.steps.begin(), config.steps.end());
  switch (config.level) {
    case Level::kL0:
      m.set_level(v1::Config::L0);
      break;
    case Level::kL1:
      m.set_level(v1::Config::L1);
      break;
    case Level::kMix:
      m.set_level(v1::Config::MIX);
      break;
  }
  for (const std::string& s : config.scope) m.add_scope(s);
  for (const std::string& s : config.list) m.add_list(s);
  switch (config.risk_level) {
    case RiskLevel::kFocus:
      m.set_risk_level(v1::Config::FOCUS);
      break;
    case RiskLevel::kCore:
      m.set_risk_level(v1::Config::CORE);
      break;
    case RiskLevel::kAll:
      m.set_risk_level(v1::Config::ALL);
      break;
  }
  v1::Config::DataMode* mode = m.mutable_data_mode();
  mode->set_forward(config.data_mode.forward);
  mode->set_backward(config.data_mode.backward);
  mode->set_input(config.data_mode.input);
  mode->set_output(config.data_mode.output);
  switch (config.summary_mode) {
    case SummaryMode::kStatistics:
      m.set_summary_mode(v1::Config::SUMMARY_STATISTICS);
      break;
    case SummaryMode::kMd5:
      m.set_summary_mode(v1::Config::MD5);
      break;
    case SummaryMode::kXor:
      m.set_summary_mode(v1::Config::XOR);
      break;
  }
  m.set_overflow_nums(config.overflow_nums);
  m.set_socket(config.socket);
  m.set_ring_bytes(config.ring_bytes);
  m.set_ring_count(config.ring_count);
  m.set_policy(config.policy == FullRingPolicy::kDrop ? v1::Config::DROP
                                                      : v1::Config::BLOCK);
  m.set_block_timeout_ms(config.block_timeout_ms);
  m.set_exit_timeout_ms(config.exit_timeout_ms);
  m.set_statistics_on(static_cast<v1::Config::StatisticsOn>(
      static_cast<int>(config.statistics_on)));
  return m;
}

Result<Config> FromProto(const v1::Config& m) {
  Config c;
  switch (m.task()) {
    case v1::Config::STATISTICS:
      c.task = Task::kStatistics;
      break;
    case v1::Config::TENSOR:
      c.task = Task::kTensor;
      break;
    case v1::Config::OVERFLOW_CHECK:
      c.task = Task::kOverflowCheck;
      break;
    case v1::Config::STRUCTURE:
      c.task = Task::kStructure;
      break;
    default:
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
  switch (m.level()) {
    case v1::Config::L0:
      c.level = Level::kL0;
      break;
    case v1::Config::L1:
      c.level = Level::kL1;
      break;
    case v1::Config::MIX:
      c.level = Level::kMix;
      break;
    default:
      return Bad("level", "it should be one of [L0, L1, mix]");
  }
  switch (m.risk_level()) {
    case v1::Config::FOCUS:
      c.risk_level = RiskLevel::kFocus;
      break;
    case v1::Config::CORE:
      c.risk_level = RiskLevel::kCore;
      break;
    case v1::Config::ALL:
      c.risk_level = RiskLevel::kAll;
      break;
    default:
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
  switch (m.summary_mode()) {
    case v1::Config::SUMMARY_STATISTICS:
      break;
    case v1::Config::MD5:
      if (c.task != Task::kStatistics) {
        return Bad("summary_mode", "only the statistics task sets it");
      }
      c.summary_mode = SummaryMode::kMd5;
      break;
    case v1::Config::XOR:
      if (c.task != Task::kStatistics) {
        return Bad("summary_mode", "only the statistics task sets it");
      }
      c.summary_mode = SummaryMode::kXor;
      break;
    default:
      return Bad("summary_mode",
                 "it should be one of ['statistics', 'md5', 'xor']");
  }
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
  switch (m.policy()) {
    case v1::Config::BLOCK:
      c.policy = FullRingPolicy::kBlock;
      break;
    case v1::Config::DROP:
      c.policy = FullRingPolicy::kDrop;
      break;
    default:
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
