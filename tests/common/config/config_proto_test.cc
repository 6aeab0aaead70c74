// common/config/config_proto.cc: the config as a tprobe.v1.Config message.

#include "common/config/config_proto.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace tprobe::config {
namespace {

TEST(ConfigProtoTest, EveryParsedConfigComesBackEqual) {
  for (const char* text : {
           "{}",
           R"({"task": "tensor", "dump_path": "/d", "rank": [0, "2-4"],
               "step": [1, 7], "level": "mix", "risk_level": "CORE",
               "tensor": {"scope": ["a", "b"], "list": ["x", "y"],
                          "data_mode": ["backward", "input"]}})",
           R"({"task": "statistics", "level": "L0", "risk_level": "ALL",
               "statistics": {"summary_mode": "md5"},
               "tprobe": {"socket": "/s", "ring_bytes": 65536,
                          "ring_count": 2, "policy": "drop",
                          "block_timeout_ms": 5, "exit_timeout_ms": 7,
                          "statistics_on": "framework"}})",
           R"({"tprobe": {"statistics_on": "daemon"}})",
           R"({"task": "overflow_check",
               "overflow_check": {"overflow_nums": -1}})",
       }) {
    auto parsed = ParseConfig(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    auto back = FromProto(ToProto(*parsed));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_TRUE(*back == *parsed) << text;
  }
}

TEST(ConfigProtoTest, ABrokenMessageIsRefusedNamingTheKey) {
  const v1::Config good = ToProto(Config{});
  const std::pair<std::function<void(v1::Config&)>, std::string> cases[] = {
      {[](v1::Config& m) { m.set_task(static_cast<v1::Config::Task>(5)); },
       "config: task is invalid"},
      {[](v1::Config& m) { m.set_level(static_cast<v1::Config::Level>(9)); },
       "config: level is invalid"},
      {[](v1::Config& m) {
         m.set_risk_level(static_cast<v1::Config::RiskLevel>(3));
       },
       "config: risk_level"},
      {[](v1::Config& m) { m.clear_dump_path(); }, "config: dump_path"},
      {[](v1::Config& m) { m.add_steps(3), m.add_steps(2); },
       "config: step is invalid, its values must be sorted and distinct"},
      {[](v1::Config& m) { m.add_ranks(-1); }, "config: rank is invalid"},
      {[](v1::Config& m) { m.add_ranks(kStepRankMax + 1); },
       "config: rank is invalid"},
      {[](v1::Config& m) { m.add_scope("only one"); }, "config: scope"},
      {[](v1::Config& m) {
         m.mutable_data_mode()->set_input(false),
             m.mutable_data_mode()->set_output(false);
       },
       "config: data_mode"},
      {[](v1::Config& m) {
         m.set_task(v1::Config::STRUCTURE);
         m.set_summary_mode(v1::Config::MD5);
       },
       "config: summary_mode"},
      {[](v1::Config& m) { m.set_overflow_nums(0); }, "config: overflow_nums"},
      {[](v1::Config& m) { m.set_ring_bytes(3 << 16); },
       "config: tprobe.ring_bytes"},
      {[](v1::Config& m) { m.set_ring_count(0); }, "config: tprobe.ring_count"},
      {[](v1::Config& m) { m.set_policy(static_cast<v1::Config::Policy>(4)); },
       "config: tprobe.policy"},
      {[](v1::Config& m) { m.set_socket(std::string(200, 's')); },
       "config: tprobe.socket"},
      {[](v1::Config& m) { m.set_exit_timeout_ms(kMaxExitTimeoutMs + 1); },
       "config: tprobe.exit_timeout_ms"},
      {[](v1::Config& m) {
         m.set_statistics_on(static_cast<v1::Config::StatisticsOn>(3));
       },
       "config: tprobe.statistics_on"},
  };
  for (const auto& [breaks, expected] : cases) {
    v1::Config m = good;
    breaks(m);
    auto c = FromProto(m);
    ASSERT_FALSE(c.ok()) << expected;
    EXPECT_EQ(c.status().message().rfind(expected, 0), 0u)
        << c.status().message();
  }
}

}  // namespace
}  // namespace tprobe::config
