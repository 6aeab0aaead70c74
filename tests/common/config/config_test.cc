#include "common/config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "common/config/config_keys.h"

namespace tprobe::config {

// Failures print the Config as its canonical JSON.
void PrintTo(const Config& config, std::ostream* os) { *os << ToJson(config); }

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// msprobe 8.3.3's packaged config.json (reference section 6.1).
constexpr const char* kMsprobeDefault = R"({
  "task": "statistics", "dump_path": "./dump_path", "rank": [], "step": [],
  "level": "L1", "enable_dataloader": false, "async_dump": false,
  "tensor": {"scope": [], "list": [], "data_mode": ["all"], "file_format": "npy"},
  "statistics": {"scope": [], "list": [], "data_mode": ["all"],
                 "summary_mode": "statistics"},
  "overflow_check": {"overflow_nums": 1, "check_mode": "all"},
  "run_ut": {"white_list": [], "black_list": [], "error_data_path": "./"},
  "grad_probe": {"grad_level": "L1", "param_list": [], "bounds": [-1, 0, 1]},
  "free_benchmark": {"scope": [], "list": [], "fuzz_device": "npu",
                     "pert_mode": "improve_precision", "handler_type": "check",
                     "fuzz_level": "L1", "fuzz_stage": "forward",
                     "if_preheat": false, "preheat_step": 15, "max_sample": 20}
})";

// ---------------------------------------------------------------------------
// Valid configs: the text, and what it changes in Config{}.

struct ValidCase {
  std::string name;
  std::string json;
  std::function<void(Config&)> expect;
};

void PrintTo(const ValidCase& c, std::ostream* os) { *os << c.json; }

std::vector<ValidCase> ValidCases() {
  return {
      {"EmptyObjectIsDefault", "{}", [](Config&) {}},
      {"MsprobeDefaultFileIsDefault", kMsprobeDefault, [](Config&) {}},
      {"NullIsAbsent",
       R"({"task": null, "step": null, "statistics": {"scope": null},
           "tprobe": null})",
       [](Config&) {}},
      {"TaskTensor", R"({"task": "tensor"})",
       [](Config& c) { c.task = Task::kTensor; }},
      {"TaskOverflowCheck", R"({"task": "overflow_check"})",
       [](Config& c) { c.task = Task::kOverflowCheck; }},
      {"DumpPath", R"({"dump_path": "/data/dump"})",
       [](Config& c) { c.dump_path = "/data/dump"; }},
      {"StepInts", R"({"step": [0, 3, 1000000]})",
       [](Config& c) {
         c.steps = {0, 3, 1000000};
       }},
      {"StepRange", R"({"step": ["3-5"]})",
       [](Config& c) {
         c.steps = {3, 4, 5};
       }},
      {"StepSingleValueRange", R"({"step": ["7-7"]})",
       [](Config& c) { c.steps = {7}; }},
      // msprobe 26.x: a string without a hyphen is one value.
      {"StepSingleValueString", R"({"step": ["3"]})",
       [](Config& c) { c.steps = {3}; }},
      {"RankIntsStringsAndRanges", R"({"rank": [1, "0", "4-6"]})",
       [](Config& c) {
         c.ranks = {0, 1, 4, 5, 6};
       }},
      {"StepDeduplicatedAndSorted", R"({"step": [9, "4-6", 1, "3-5", 5, 1]})",
       [](Config& c) { c.steps = {1, 3, 4, 5, 6, 9}; }},
      {"StepEmptyListMeansAll", R"({"step": []})", [](Config&) {}},
      {"RankIntsAndRanges", R"({"rank": ["2-3", 0, 3]})",
       [](Config& c) {
         c.ranks = {0, 2, 3};
       }},
      {"LevelL0", R"({"level": "L0"})",
       [](Config& c) { c.level = Level::kL0; }},
      {"LevelL1", R"({"level": "L1"})", [](Config&) {}},
      {"LevelMix", R"({"level": "mix"})",
       [](Config& c) { c.level = Level::kMix; }},
      {"AcceptedTopLevelFlags",
       R"({"enable_dataloader": true, "async_dump": false, "precision": "high"})",
       [](Config&) {}},
      // msprobe 26.x's task structure: no data, construct and stack only.
      {"SummaryModeXor", R"({"statistics": {"summary_mode": "xor"}})",
       [](Config& c) { c.summary_mode = SummaryMode::kXor; }},
      {"TaskStructure", R"({"task": "structure"})",
       [](Config& c) { c.task = Task::kStructure; }},
      // tprobe is always asynchronous.
      {"AsyncDumpTrue", R"({"async_dump": true})", [](Config&) {}},
      // The adapter acts on dump_enable (tprobe/_common/dump_enable.py).
      {"DumpEnable", R"({"dump_enable": false})", [](Config&) {}},
      // Keys without effect, accepted with a warning (WarningsTest).
      {"KeysWithoutEffect",
       R"({"acl_config": "./acl.json", "seed": 1234, "is_deterministic": true,
           "custom_op_namespaces": ["_C_ascend"],
           "statistics": {"slice": [{"dim": 0}], "request_id": "r1",
                          "diff_nums": 3, "device": "host",
                          "precision": "high"}})",
       [](Config&) {}},
      // msprobe 26.2's main task: tensor example, with diff_check's keys.
      {"TensorWithDiffCheckKeys",
       R"({"task": "tensor", "tensor": {"scope": [], "list": [],
           "data_mode": ["all"], "bench_path": "/bench", "diff_nums": 5}})",
       [](Config& c) { c.task = Task::kTensor; }},
      {"TensorSummaryModeMd5",
       R"({"task": "tensor", "tensor": {"summary_mode": "md5"}})",
       [](Config& c) {
         c.task = Task::kTensor;
         c.summary_mode = SummaryMode::kMd5;
       }},
      {"StatisticsWithoutSummaryMode",
       R"({"statistics": {"scope": [], "list": [], "data_mode": ["all"]}})",
       [](Config&) {}},
      // summary_mode means nothing to the structure and overflow tasks.
      {"StructureSummaryModeIgnored",
       R"({"task": "structure", "structure": {"summary_mode": "md5"}})",
       [](Config& c) { c.task = Task::kStructure; }},
      // msprobe 26.2.0's own config.json, as its package ships it.
      {"Msprobe26DefaultConfig", R"({
    "task": "statistics", "dump_path": "./dump_path", "rank": [], "step": [],
    "level": "L1", "extra_info": true, "async_dump": false,
    "statistics": {"scope": [], "list": [], "data_mode": ["all"],
                   "summary_mode": "statistics"},
    "tensor": {"scope": [], "list": [], "data_mode": ["all"]},
    "acc_check": {"white_list": [], "black_list": [], "error_data_path": "./"}
})",
       [](Config& c) { c.dump_path = "./dump_path"; }},
      {"PrecisionLow", R"({"precision": "low"})", [](Config&) {}},
      {"RiskLevelAll", R"({"risk_level": "ALL"})",
       [](Config& c) { c.risk_level = RiskLevel::kAll; }},
      {"RiskLevelFocus", R"({"risk_level": "FOCUS"})", [](Config&) {}},
      {"RiskLevelCore", R"({"risk_level": "CORE"})",
       [](Config& c) { c.risk_level = RiskLevel::kCore; }},
      // msprobe 26.x: a null or empty risk_level means "ALL".
      {"RiskLevelNull", R"({"risk_level": null})",
       [](Config& c) { c.risk_level = RiskLevel::kAll; }},
      {"RiskLevelEmpty", R"({"risk_level": ""})",
       [](Config& c) { c.risk_level = RiskLevel::kAll; }},
      {"Scope",
       R"({"statistics": {"scope": ["Module.conv1.Conv2d.forward.0",
                                    "Module.fc.Linear.forward.0"]}})",
       [](Config& c) {
         c.scope = {"Module.conv1.Conv2d.forward.0",
                    "Module.fc.Linear.forward.0"};
       }},
      {"EmptyScopeAndList", R"({"statistics": {"scope": [], "list": []}})",
       [](Config&) {}},
      {"List", R"({"statistics": {"list": ["conv2d", "relu"]}})",
       [](Config& c) {
         c.list = {"conv2d", "relu"};
       }},
      {"DataModeAll", R"({"statistics": {"data_mode": ["all"]}})",
       [](Config&) {}},
      {"DataModeEmptyMeansAll", R"({"statistics": {"data_mode": []}})",
       [](Config&) {}},
      {"DataModeForward", R"({"statistics": {"data_mode": ["forward"]}})",
       [](Config& c) { c.data_mode.backward = false; }},
      {"DataModeInput", R"({"statistics": {"data_mode": ["input"]}})",
       [](Config& c) { c.data_mode.output = false; }},
      {"DataModeBackwardOutput",
       R"({"statistics": {"data_mode": ["backward", "output"]}})",
       [](Config& c) {
         c.data_mode = {false, true, false, true};
       }},
      {"DataModeBothDirectionsIsAll",
       R"({"statistics": {"data_mode": ["forward", "backward"]}})",
       [](Config&) {}},
      {"DataModeFourOptions",
       R"({"statistics": {"data_mode": ["input", "output", "forward", "backward"]}})",
       [](Config&) {}},
      {"SummaryModeMd5", R"({"statistics": {"summary_mode": "md5"}})",
       [](Config& c) { c.summary_mode = SummaryMode::kMd5; }},
      {"SummaryModeStatistics",
       R"({"statistics": {"summary_mode": "statistics"}})", [](Config&) {}},
      {"EmptyTensorList", R"({"statistics": {"tensor_list": []}})",
       [](Config&) {}},
      {"TensorSection",
       R"({"task": "tensor", "tensor": {"list": ["matmul"],
           "data_mode": ["output"], "file_format": "bin"}})",
       [](Config& c) {
         c.task = Task::kTensor;
         c.list = {"matmul"};
         c.data_mode.input = false;
       }},
      {"OverflowUnlimited",
       R"({"task": "overflow_check",
           "overflow_check": {"overflow_nums": -1, "check_mode": "all"}})",
       [](Config& c) {
         c.task = Task::kOverflowCheck;
         c.overflow_nums = -1;
       }},
      {"OverflowFive",
       R"({"task": "overflow_check", "overflow_check": {"overflow_nums": 5,
           "scope": [], "list": ["add"], "data_mode": ["all"]}})",
       [](Config& c) {
         c.task = Task::kOverflowCheck;
         c.overflow_nums = 5;
         c.list = {"add"};
       }},
      {"OtherTaskSectionsAreIgnored",
       R"({"task": "tensor", "statistics": {"summary_mode": "xor", "bogus": 1},
           "overflow_check": 5, "tensor": {}})",
       [](Config& c) { c.task = Task::kTensor; }},
      {"TprobeSection",
       R"({"tprobe": {"socket": "/run/tprobe/ctl.sock", "ring_bytes": 65536,
           "ring_count": 64, "policy": "drop", "block_timeout_ms": 0}})",
       [](Config& c) {
         c.socket = "/run/tprobe/ctl.sock";
         c.ring_bytes = 65536;
         c.ring_count = 64;
         c.policy = FullRingPolicy::kDrop;
         c.block_timeout_ms = 0;
       }},
      {"TprobeUpperBounds",
       R"({"tprobe": {"ring_bytes": 1073741824, "ring_count": 1,
           "policy": "block", "block_timeout_ms": 4294967295,
           "exit_timeout_ms": 600000}})",
       [](Config& c) {
         c.ring_bytes = uint64_t{1} << 30;
         c.ring_count = 1;
         c.block_timeout_ms = 4294967295u;
         c.exit_timeout_ms = 600000;
       }},
      {"TprobeEmptySection", R"({"tprobe": {}})", [](Config&) {}},
      {"StatisticsOnFramework", R"({"tprobe": {"statistics_on": "framework"}})",
       [](Config& c) { c.statistics_on = StatisticsOn::kFramework; }},
      {"StatisticsOnDaemon", R"({"tprobe": {"statistics_on": "daemon"}})",
       [](Config& c) { c.statistics_on = StatisticsOn::kDaemon; }},
      {"StatisticsOnAuto", R"({"tprobe": {"statistics_on": "auto"}})",
       [](Config&) {}},
  };
}

class ValidConfigTest : public ::testing::TestWithParam<ValidCase> {};

TEST_P(ValidConfigTest, ParsesToExpectedConfig) {
  Config expected;
  GetParam().expect(expected);
  Result<Config> parsed = ParseConfig(GetParam().json);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed.value(), expected);
}

TEST_P(ValidConfigTest, ToJsonReadsBackToEqualConfig) {
  Result<Config> parsed = ParseConfig(GetParam().json);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  std::string text = ToJson(parsed.value());
  Result<Config> again = ParseConfig(text);
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << text;
  EXPECT_EQ(again.value(), parsed.value()) << text;
}

INSTANTIATE_TEST_SUITE_P(Cases, ValidConfigTest,
                         ::testing::ValuesIn(ValidCases()),
                         [](const ::testing::TestParamInfo<ValidCase>& info) {
                           return info.param.name;
                         });

// ---------------------------------------------------------------------------
// Invalid configs: the text, and a part of the message the user sees.

struct InvalidCase {
  std::string name;
  std::string json;
  std::string message;
};

void PrintTo(const InvalidCase& c, std::ostream* os) { *os << c.json; }

std::vector<InvalidCase> InvalidCases() {
  const std::string kTopKeys =
      "[task, dump_path, rank, step, level, risk_level, dump_enable, "
      "statistics, tensor, overflow_check, structure, tprobe, async_dump, "
      "extra_info, precision, enable_dataloader, custom_op_namespaces, "
      "acl_config, seed, is_deterministic, acc_check, diff_check, nan_check, "
      "exception_dump, run_ut, grad_probe, free_benchmark]";
  const std::string kModes =
      "is not in ['all','input','output','forward','backward'].";
  return {
      // Text that is not a JSON object.
      {"MalformedJson", R"({"task": })",
       "config: malformed JSON: parse error at line 1, column 10"},
      {"MalformedJsonOnLaterLine", "{\n \"step\": [1,\n 2,,]\n}",
       "config: malformed JSON: parse error at line 3, column 4"},
      {"EmptyText", "", "config: malformed JSON: parse error at line 1"},
      {"TopLevelArray", "[]",
       "config: the top level must be a JSON object, not array"},

      // Unknown keys at each level.
      {"UnknownTopLevelKey", R"({"stpe": [1]})",
       "config: unknown key 'stpe' at the top level (did you mean 'step'?); "
       "allowed keys are " +
           kTopKeys},
      {"TypoSuggestsNearestKey", R"({"lvel": "L0"})",
       "config: unknown key 'lvel' at the top level (did you mean 'level'?); "
       "allowed keys are ["},
      // A refused key ('device', the ATB dump's) is never suggested.
      {"TypoNearARefusedKeyOnly", R"({"devise": "npu"})",
       "config: unknown key 'devise' at the top level; allowed keys are ["},
      {"UnknownKeyFarFromAnyKnown", R"({"verbosity": 3})",
       "config: unknown key 'verbosity' at the top level; allowed keys are ["},
      {"DumpEnableNotABool", R"({"dump_enable": "true"})",
       "config: dump_enable is invalid, it should be a boolean"},
      {"UnknownStatisticsKey", R"({"statistics": {"data_modes": ["all"]}})",
       "config: unknown key 'data_modes' in section 'statistics' (did you "
       "mean 'data_mode'?); allowed keys are [scope, list, data_mode, slice, "
       "request_id, diff_nums, summary_mode, tensor_list, device, "
       "precision]"},
      {"UnknownTensorKey", R"({"task": "tensor", "tensor": {"bench": "/b"}})",
       "config: unknown key 'bench' in section 'tensor'; allowed keys are "
       "[scope, list, data_mode, slice, request_id, diff_nums, summary_mode, "
       "file_format, bench_path]"},
      // Refused: what tprobe does not support, said so.
      {"AtbDumpRefused",
       R"({"task": "tensor", "dump_enable": false, "exec_range": "all",
           "device": ""})",
       "config: exec_range: msprobe's ATB dump (its config has a top-level "
       "'device' key) is not supported by tprobe; use a PyTorch or MindSpore "
       "config.json"},
      {"AtbDeviceKeyRefused", R"({"device": "npu"})",
       "config: device: msprobe's ATB dump (its config has a top-level "
       "'device' key) is not supported by tprobe"},
      {"LoadSectionRefused", R"({"load": {"path": "/d", "modules": []}})",
       "config: load: replacing module inputs with previously dumped "
       "tensors (msprobe's 'load' section) is not supported by tprobe"},
      {"TaskAccCheck", R"({"task": "acc_check"})",
       "(msprobe's online accuracy checker (task acc_check, formerly run_ut) "
       "is not supported by tprobe)"},
      {"TaskExceptionDump", R"({"task": "exception_dump"})",
       "(msprobe's exception dump (task exception_dump, MindSpore static "
       "graph) is not supported by tprobe)"},
      {"TaskNanCheck", R"({"task": "nan_check"})",
       "(msprobe's NPU NaN check (task nan_check) is not supported by tprobe; "
       "task overflow_check dumps the calls whose outputs hold NaN or Inf)"},
      {"TaskDiffCheck", R"({"task": "diff_check"})",
       "(msprobe's bench comparison at dump time (task diff_check) is not "
       "supported by tprobe; dump both runs and use `tprobe compare`)"},
      {"LevelDebugTaskOverflowCheck",
       R"({"task": "overflow_check", "level": "debug"})",
       "config: level debug is invalid with task overflow_check, tprobe takes "
       "it with task statistics or tensor"},
      {"LevelDebugXor",
       R"({"level": "debug", "statistics": {"summary_mode": "xor"}})",
       "config: level debug with summary_mode xor is not supported by "
       "tprobe; use statistics or md5"},
      {"SummaryModeListIsStaticGraphs",
       R"({"statistics": {"summary_mode": ["max", "min"]}})",
       "config: summary_mode is invalid: a list of statistics is MindSpore "
       "static graph's; tprobe takes one of ['statistics', 'md5', 'xor']"},
      {"OverflowNumsIsNotAStatisticsKey",
       R"({"statistics": {"overflow_nums": 2}})",
       "config: unknown key 'overflow_nums' in section 'statistics'"},
      {"UnknownOverflowCheckKey",
       R"({"task": "overflow_check", "overflow_check": {"overflow_num": 2}})",
       "config: unknown key 'overflow_num' in section 'overflow_check' (did "
       "you mean 'overflow_nums'?); allowed keys are [scope, list, data_mode, "
       "slice, request_id, diff_nums, overflow_nums, check_mode, "
       "summary_mode]"},
      {"UnknownTprobeKey", R"({"tprobe": {"ring_size": 65536}})",
       "config: unknown key 'ring_size' in section 'tprobe'; allowed keys are "
       "[socket, ring_bytes, ring_count, policy, block_timeout_ms, "
       "exit_timeout_ms, statistics_on]"},

      // Top-level fields.
      {"TaskUnknown", R"({"task": "stats"})",
       "config: task is invalid, it should be one of [statistics, tensor, "
       "overflow_check, structure]"},
      {"TaskNotAString", R"({"task": 1})",
       "config: task is invalid, it should be one of [statistics, tensor, "
       "overflow_check, structure]"},
      {"TaskOfMsprobeOnly", R"({"task": "run_ut"})",
       "(msprobe's online accuracy checker (task acc_check, formerly run_ut) "
       "is not supported by tprobe)"},
      {"LevelUnknown", R"({"level": "L3"})",
       "config: level is invalid, it should be one of [L0, L1, mix, debug]"},
      {"LevelNotAString", R"({"level": 1})",
       "config: level is invalid, it should be one of [L0, L1, mix, debug]"},
      {"LevelOfMsprobeOnly", R"({"level": "L2"})",
       "config: level is invalid, it should be one of [L0, L1, mix, debug] "
       "(msprobe's kernel dump (level L2) is not supported by tprobe)"},
      {"DumpPathNotAString", R"({"dump_path": ["a"]})",
       "config: dump_path is invalid, it should be a string"},
      {"DumpPathEmpty", R"({"dump_path": ""})",
       "config: dump_path is invalid, it should not be empty"},
      {"EnableDataloaderNotABool", R"({"enable_dataloader": "false"})",
       "config: enable_dataloader is invalid, it should be a boolean"},
      {"AsyncDumpNotABool", R"({"async_dump": 0})",
       "config: async_dump is invalid, it should be a boolean"},
      {"ExtraInfoNotABool", R"({"extra_info": "yes"})",
       "config: extra_info is invalid, it should be a boolean"},
      {"PrecisionUnknown", R"({"precision": "medium"})",
       "config: precision is invalid, it should be one of ['low', 'high']"},
      {"RiskLevelUnknown", R"({"risk_level": "all"})",
       "config: risk_level is invalid, it should be one of ['CORE', 'FOCUS', "
       "'ALL']"},
      {"RiskLevelNotAString", R"({"risk_level": 1})",
       "config: risk_level is invalid, it should be one of ['CORE', 'FOCUS', "
       "'ALL']"},

      // step and rank.
      {"StepNotAList", R"({"step": 1})",
       "config: step is invalid, it should be a list"},
      {"RankNotAList", R"({"rank": "0-3"})",
       "config: rank is invalid, it should be a list"},
      {"StepFloatElement", R"({"step": [1.5]})",
       "config: step element 1.5 must be an integer or string."},
      {"StepBoolElement", R"({"step": [true]})",
       "config: step element true must be an integer or string."},
      {"RankListElement", R"({"rank": [[1]]})",
       "config: rank element [1] must be an integer or string."},
      {"StepAboveMaximum", R"({"step": [1000001]})",
       "config: Each element of step must be between 0 and 1000000, "
       "currently it is 1000001."},
      {"StepNegative", R"({"step": [-1]})",
       "config: Each element of step must be between 0 and 1000000, "
       "currently it is -1."},
      {"RankBeyondInt64", R"({"rank": [18446744073709551615]})",
       "config: Each element of rank must be between 0 and 1000000, "
       "currently it is 18446744073709551615."},
      {"StepStringNotANumber", R"({"step": ["three"]})",
       "config: The string parameter for step only supports formats like "
       "\"3\" or \"3-5\". Now string parameter for step is \"three\"."},
      {"StepStringWithTwoHyphens", R"({"step": ["1-2-3"]})",
       "config: The string parameter for step only supports formats like "
       "\"3\" or \"3-5\". Now string parameter for step is \"1-2-3\"."},
      {"StepRangeNotDecimal", R"({"step": ["a-5"]})",
       "config: The hyphen(-) must start and end with decimal numbers. Now "
       "string parameter for step is \"a-5\"."},
      {"StepRangeOpenEnded", R"({"step": ["3-"]})",
       "config: The hyphen(-) must start and end with decimal numbers."},
      {"StepRangeReversed", R"({"step": ["5-3"]})",
       "config: For step, the left boundary (5) cannot be greater than the "
       "right boundary (3)."},
      {"RankRangeAboveMaximum", R"({"rank": ["0-1000001"]})",
       "config: The boundaries must fall within the range of [0, 1000000]. "
       "Now string parameter for rank is \"0-1000001\"."},
      {"StepRangeOverlongNumber", R"({"step": ["0-99999999999999999999999"]})",
       "config: The boundaries must fall within the range of [0, 1000000]."},

      // The task section.
      {"TaskSectionNotAnObject", R"({"statistics": []})",
       "config: statistics is invalid, it should be an object"},
      {"ScopeNotAList", R"({"statistics": {"scope": "Module.a"}})",
       "config: scope is invalid, it should be a list[str]"},
      {"ScopeNotStrings", R"({"statistics": {"scope": [1, 2]}})",
       "config: scope is invalid, it should be a list[str]"},
      {"ScopeOneName", R"({"statistics": {"scope": ["Module.a.A.forward.0"]}})",
       "config: scope is invalid, it should be empty or hold exactly 2 names "
       "[start, end], currently it holds 1"},
      {"ScopeThreeNames", R"({"statistics": {"scope": ["a", "b", "c"]}})",
       "currently it holds 3"},
      {"ListNotAList", R"({"statistics": {"list": "conv2d"}})",
       "config: list is invalid, it should be a list[str]"},
      {"ListNotStrings", R"({"task": "tensor", "tensor": {"list": [null]}})",
       "config: list is invalid, it should be a list[str]"},
      {"DataModeNotAList", R"({"statistics": {"data_mode": "all"}})",
       "config: data_mode is invalid, it should be a list"},
      {"DataModeAllCombined",
       R"({"statistics": {"data_mode": ["all", "input"]}})",
       "config: 'all' cannot be combined with other options in data_mode."},
      {"DataModeAllTwice", R"({"statistics": {"data_mode": ["all", "all"]}})",
       "config: 'all' cannot be combined with other options in data_mode."},
      {"DataModeUnknownElement",
       R"({"statistics": {"data_mode": ["forward", "inputs"]}})",
       "config: The element 'inputs' of data_mode [\"forward\",\"inputs\"] " +
           kModes},
      {"DataModeNonStringElement", R"({"statistics": {"data_mode": [1]}})",
       "config: The element 1 of data_mode [1] " + kModes},
      {"DataModeTooMany",
       R"({"statistics": {"data_mode":
           ["input", "output", "forward", "backward", "input"]}})",
       "config: The number of elements in the data_made cannot exceed 4."},
      {"SummaryModeUnknown", R"({"statistics": {"summary_mode": "sha"}})",
       "config: summary_mode is invalid, summary_mode is not in "
       "['statistics', 'md5', 'xor']."},
      {"SummaryModeNotAString", R"({"statistics": {"summary_mode": 5}})",
       "config: summary_mode is invalid, summary_mode is not in "
       "['statistics', 'md5', 'xor']."},
      {"TensorListNotEmpty", R"({"statistics": {"tensor_list": ["conv2d"]}})",
       "config: tensor_list is not supported by tprobe yet"},
      {"TensorListNotAList", R"({"statistics": {"tensor_list": "conv2d"}})",
       "config: tensor_list is invalid, it should be a list[str]"},
      {"FileFormatUnknown",
       R"({"task": "tensor", "tensor": {"file_format": "pt"}})",
       "config: file_format is invalid, it should be one of [npy, bin]"},
      {"OverflowNumsZero",
       R"({"task": "overflow_check", "overflow_check": {"overflow_nums": 0}})",
       "config: overflow_nums should be -1 or positive integer"},
      {"OverflowNumsMinusTwo",
       R"({"task": "overflow_check", "overflow_check": {"overflow_nums": -2}})",
       "config: overflow_nums should be -1 or positive integer"},
      {"OverflowNumsFloat",
       R"({"task": "overflow_check", "overflow_check": {"overflow_nums": 1.5}})",
       "config: overflow_nums is invalid, it should be an integer"},
      {"OverflowNumsString",
       R"({"task": "overflow_check", "overflow_check": {"overflow_nums": "1"}})",
       "config: overflow_nums is invalid, it should be an integer"},
      {"CheckModeUnknown",
       R"({"task": "overflow_check", "overflow_check": {"check_mode": "some"}})",
       "config: check_mode is invalid, it should be one of [all, aicore, "
       "atomic]"},

      // The tprobe section.
      {"TprobeNotAnObject", R"({"tprobe": "fast"})",
       "config: tprobe is invalid, it should be an object"},
      {"SocketNotAString", R"({"tprobe": {"socket": 5}})",
       "config: tprobe.socket is invalid, it should be a string"},
      {"SocketTooLong",
       R"({"tprobe": {"socket": ")" + std::string(108, 's') + R"("}})",
       "config: tprobe.socket is invalid, a Unix socket path holds at most "
       "107 bytes, currently it has 108"},
      {"RingBytesTooSmall", R"({"tprobe": {"ring_bytes": 32768}})",
       "config: tprobe.ring_bytes is invalid, it should be an integer between "
       "65536 and 1073741824, currently it is 32768"},
      {"RingBytesTooLarge", R"({"tprobe": {"ring_bytes": 2147483648}})",
       "currently it is 2147483648"},
      {"RingBytesNotPowerOfTwo", R"({"tprobe": {"ring_bytes": 100000}})",
       "config: tprobe.ring_bytes is invalid, it should be a power of two, "
       "currently it is 100000"},
      {"RingBytesNotAnInteger", R"({"tprobe": {"ring_bytes": "8M"}})",
       "config: tprobe.ring_bytes is invalid, it should be an integer between "
       "65536 and 1073741824"},
      {"RingCountZero", R"({"tprobe": {"ring_count": 0}})",
       "config: tprobe.ring_count is invalid, it should be an integer between "
       "1 and 64, currently it is 0"},
      {"RingCountTooLarge", R"({"tprobe": {"ring_count": 65}})",
       "currently it is 65"},
      {"RingCountFloat", R"({"tprobe": {"ring_count": 4.0}})",
       "config: tprobe.ring_count is invalid, it should be an integer"},
      {"StatisticsOnUnknown", R"({"tprobe": {"statistics_on": "gpu"}})",
       "config: tprobe.statistics_on is invalid, it should be one of [auto, "
       "framework, daemon]"},
      {"StatisticsOnNotAString", R"({"tprobe": {"statistics_on": 1}})",
       "config: tprobe.statistics_on is invalid, it should be one of [auto, "
       "framework, daemon]"},
      {"PolicyUnknown", R"({"tprobe": {"policy": "wait"}})",
       "config: tprobe.policy is invalid, it should be one of [drop, block]"},
      {"ExitTimeoutTooLong", R"({"tprobe": {"exit_timeout_ms": 600001}})",
       "config: tprobe.exit_timeout_ms is invalid, it should be an integer "
       "between 0 and 600000, currently it is 600001"},
      {"BlockTimeoutNegative", R"({"tprobe": {"block_timeout_ms": -1}})",
       "config: tprobe.block_timeout_ms is invalid, it should be an integer "
       "between 0 and 4294967295, currently it is -1"},
      {"BlockTimeoutTooLarge",
       R"({"tprobe": {"block_timeout_ms": 4294967296}})",
       "currently it is 4294967296"},
  };
}

class InvalidConfigTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidConfigTest, FailsWithClearMessage) {
  Result<Config> parsed = ParseConfig(GetParam().json);
  ASSERT_FALSE(parsed.ok()) << ToJson(parsed.value());
  EXPECT_THAT(parsed.status().message(), StartsWith("config: "));
  EXPECT_THAT(parsed.status().message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(Cases, InvalidConfigTest,
                         ::testing::ValuesIn(InvalidCases()),
                         [](const ::testing::TestParamInfo<InvalidCase>& info) {
                           return info.param.name;
                         });

// ---------------------------------------------------------------------------
// ToJson.

// ---------------------------------------------------------------------------
// Warnings: one line for each key that is accepted without effect.

struct WarningCase {
  std::string name;
  std::string json;
  std::vector<std::string> warnings;
};

void PrintTo(const WarningCase& c, std::ostream* os) { *os << c.json; }

std::vector<WarningCase> WarningCases() {
  const std::string kDiffCheck =
      " has no effect: it is diff_check's; tprobe does not run diff_check";
  return {
      {"MsprobeDefaultsWarnNothing", kMsprobeDefault, {}},
      {"DefaultValuesWarnNothing",
       R"({"extra_info": true, "precision": "low", "async_dump": true,
           "enable_dataloader": false, "dump_enable": true,
           "task": "tensor", "tensor": {"file_format": "npy"}})",
       {}},
      {"TopLevelKeysWithoutEffect",
       R"({"seed": 1234, "acl_config": "a.json", "is_deterministic": false,
           "custom_op_namespaces": [], "extra_info": false,
           "precision": "high", "enable_dataloader": true})",
       {"config: seed has no effect: tprobe does not seed from config.json; "
        "call tprobe.torch.seed_all(seed=..., mode=...)",
        "config: acl_config has no effect: it configures msprobe's Ascend "
        "ACL dump, which tprobe does not run",
        "config: is_deterministic has no effect: tprobe does not set "
        "deterministic algorithms from config.json; call "
        "tprobe.torch.seed_all(seed=..., mode=True)",
        "config: custom_op_namespaces has no effect: tprobe does not hook "
        "torch.ops namespaces (NPU custom operators)",
        "config: enable_dataloader has no effect: call start(), stop() and "
        "step() in the training loop (msprobe deprecates the key too)",
        "config: extra_info has no effect: tprobe always writes stack.json "
        "and construct.json",
        "config: precision has no effect: tprobe computes each statistic one "
        "way whatever precision says (docs/format.md)"}},
      {"TensorSectionKeys",
       R"({"task": "tensor", "tensor": {"bench_path": "/b", "diff_nums": 2,
           "file_format": "bin"}})",
       {"config: tensor.bench_path" + kDiffCheck,
        "config: tensor.diff_nums" + kDiffCheck,
        "config: tensor.file_format has no effect: tprobe writes .npy files "
        "('bin' is MindSpore static graph's)"}},
      {"StatisticsSectionKeys",
       R"({"statistics": {"slice": [], "request_id": "r", "device": "host",
           "precision": "low"}})",
       {"config: statistics.slice has no effect: tprobe dumps whole tensors, "
        "not slices of them",
        "config: statistics.request_id has no effect: it selects an "
        "inference request; tprobe dumps every call",
        "config: statistics.device has no effect: it is MindSpore static "
        "graph's; tprobe computes statistics where tprobe.statistics_on says",
        "config: statistics.precision has no effect: it is MindSpore static "
        "graph's device statistics precision; tprobe computes each statistic "
        "one way"}},
      {"NullValuesWarnNothing",
       R"({"seed": null, "statistics": {"slice": null}})",
       {}},
      {"OtherTaskSectionsWarnNothing",
       R"({"statistics": {}, "tensor": {"bench_path": "/b"}})",
       {}},
      {"OverflowCheckKeys",
       R"({"task": "overflow_check", "overflow_check": {"check_mode": "aicore",
           "summary_mode": "md5"}})",
       {"config: overflow_check.summary_mode has no effect: the "
        "overflow_check task writes statistics",
        "config: overflow_check.check_mode has no effect: it is MindSpore "
        "static graph's (before 2.3); tprobe checks every dumped call's "
        "outputs"}},
  };
}

class WarningsTest : public ::testing::TestWithParam<WarningCase> {};

TEST_P(WarningsTest, WarnsOnceForEachKeyWithoutEffect) {
  std::vector<std::string> warnings = {"left from before"};
  Result<Config> parsed = ParseConfig(GetParam().json, &warnings);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(warnings, GetParam().warnings);
}

INSTANTIATE_TEST_SUITE_P(Cases, WarningsTest,
                         ::testing::ValuesIn(WarningCases()),
                         [](const ::testing::TestParamInfo<WarningCase>& info) {
                           return info.param.name;
                         });

TEST(WarningsTest, FailureLeavesWarningsAsTheyWere) {
  std::vector<std::string> warnings = {"kept"};
  Result<Config> parsed =
      ParseConfig(R"({"seed": 1, "lvel": "L0"})", &warnings);
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(warnings, std::vector<std::string>{"kept"});
}

TEST(ToJsonTest, DefaultConfigHasCanonicalText) {
  EXPECT_EQ(ToJson(Config{}), R"({
 "task": "statistics",
 "dump_path": "./dump_path",
 "rank": [],
 "step": [],
 "level": "L1",
 "risk_level": "FOCUS",
 "statistics": {
  "scope": [],
  "list": [],
  "data_mode": [
   "all"
  ],
  "summary_mode": "statistics"
 },
 "tprobe": {
  "socket": "",
  "ring_bytes": 8388608,
  "ring_count": 4,
  "policy": "block",
  "block_timeout_ms": 100,
  "exit_timeout_ms": 1000,
  "statistics_on": "auto"
 }
})");
}

TEST(ToJsonTest, RoundTripsEveryNonDefaultField) {
  Config config;
  config.task = Task::kOverflowCheck;
  config.dump_path = "/mnt/dump/run 7";
  config.ranks = {0, 4, 5, 6};
  config.steps = {2, 1000000};
  config.level = Level::kMix;
  config.risk_level = RiskLevel::kCore;
  config.scope = {"Module.a.A.forward.0", "Tensor.add.3.backward"};
  config.list = {"conv", "\"quoted\"\n"};
  config.data_mode = {false, true, true, false};
  config.overflow_nums = -1;
  config.socket = "@tprobe-test";
  config.ring_bytes = uint64_t{1} << 20;
  config.ring_count = 9;
  config.policy = FullRingPolicy::kDrop;
  config.statistics_on = StatisticsOn::kFramework;
  config.block_timeout_ms = 0;

  std::string text = ToJson(config);
  Result<Config> parsed = ParseConfig(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << text;
  EXPECT_EQ(parsed.value(), config);
  EXPECT_THAT(text, HasSubstr("\"rank\": [\n  0,\n  \"4-6\"\n ]"));
  EXPECT_THAT(text, HasSubstr("\"data_mode\": [\n   \"backward\",\n   "
                              "\"input\"\n  ]"));
}

TEST(ToJsonTest, WritesEveryStepAsOneRange) {
  Result<Config> parsed = ParseConfig(R"({"step": [1000000, "0-999999"]})");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed.value().steps.size(), 1000001u);
  std::string text = ToJson(parsed.value());
  EXPECT_THAT(text, HasSubstr("\"step\": [\n  \"0-1000000\"\n ]"));
  Result<Config> again = ParseConfig(text);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again.value(), parsed.value());
}

TEST(ToJsonTest, RoundTripsMd5Statistics) {
  Config config;
  config.summary_mode = SummaryMode::kMd5;
  config.data_mode = {true, false, false, true};
  Result<Config> parsed = ParseConfig(ToJson(config));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed.value(), config);
}

TEST(ConfigEqualityTest, ComparesEveryField) {
  Config a, b;
  EXPECT_EQ(a, b);
  b.block_timeout_ms = 1;
  EXPECT_NE(a, b);
  b = a;
  b.data_mode.output = false;
  EXPECT_NE(a, b);
}

// ---------------------------------------------------------------------------
// Selection helpers.

TEST(SelectionTest, StepSelectedWhenStepsEmptyOrListed) {
  Config config;
  EXPECT_TRUE(StepSelected(config, 0));
  EXPECT_TRUE(StepSelected(config, 123456));
  config.steps = {1, 3, 4};
  EXPECT_FALSE(StepSelected(config, 0));
  EXPECT_TRUE(StepSelected(config, 1));
  EXPECT_FALSE(StepSelected(config, 2));
  EXPECT_TRUE(StepSelected(config, 4));
  EXPECT_FALSE(StepSelected(config, 5));
}

TEST(SelectionTest, RankSelectedWhenRanksEmptyListedOrNotDistributed) {
  Config config;
  EXPECT_TRUE(RankSelected(config, 0));
  EXPECT_TRUE(RankSelected(config, -1));
  config.ranks = {0, 2};
  EXPECT_TRUE(RankSelected(config, 0));
  EXPECT_FALSE(RankSelected(config, 1));
  EXPECT_TRUE(RankSelected(config, 2));
  EXPECT_FALSE(RankSelected(config, 3));
  EXPECT_TRUE(RankSelected(config, -1));
}

TEST(SelectionTest, LastStepIsMaxStepOrNone) {
  Config config;
  EXPECT_EQ(LastStep(config), std::nullopt);
  Result<Config> parsed = ParseConfig(R"({"step": ["3-5", 9, 0]})");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(LastStep(parsed.value()), 9);
}

struct DataModeCase {
  std::string data_mode;
  bool forward_input, forward_output, backward_input, backward_output;
};

TEST(SelectionTest, DataModeSelectsDirectionAndSide) {
  const std::vector<DataModeCase> cases = {
      {R"(["all"])", true, true, true, true},
      {R"([])", true, true, true, true},
      {R"(["forward"])", true, true, false, false},
      {R"(["backward"])", false, false, true, true},
      {R"(["input"])", true, false, true, false},
      {R"(["output"])", false, true, false, true},
      {R"(["forward", "output"])", false, true, false, false},
      {R"(["backward", "input", "output"])", false, false, true, true},
  };
  for (const DataModeCase& c : cases) {
    SCOPED_TRACE(c.data_mode);
    Result<Config> parsed =
        ParseConfig(R"({"statistics": {"data_mode": )" + c.data_mode + "}}");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    const DataMode& mode = parsed.value().data_mode;
    EXPECT_EQ(DataModeSelected(mode, true, true), c.forward_input);
    EXPECT_EQ(DataModeSelected(mode, true, false), c.forward_output);
    EXPECT_EQ(DataModeSelected(mode, false, true), c.backward_input);
    EXPECT_EQ(DataModeSelected(mode, false, false), c.backward_output);
  }
}

TEST(NamesTest, UseMsprobeSpelling) {
  EXPECT_EQ(TaskName(Task::kStatistics), "statistics");
  EXPECT_EQ(TaskName(Task::kTensor), "tensor");
  EXPECT_EQ(TaskName(Task::kOverflowCheck), "overflow_check");
  EXPECT_EQ(LevelName(Level::kL0), "L0");
  EXPECT_EQ(LevelName(Level::kL1), "L1");
  EXPECT_EQ(LevelName(Level::kMix), "mix");
}

// ---------------------------------------------------------------------------
// Files.

class LoadConfigFileTest : public ::testing::Test {
 protected:
  // Writes `text` to a file of this test's own and returns its path.
  std::string WriteFile(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ =
        ::testing::TempDir() + "tprobe_config_test_" + info->name() + ".json";
    std::FILE* file = std::fopen(path_.c_str(), "wb");
    EXPECT_NE(file, nullptr);
    if (file != nullptr) {
      std::fwrite(text.data(), 1, text.size(), file);
      std::fclose(file);
    }
    return path_;
  }
  void TearDown() override {
    if (!path_.empty()) std::remove(path_.c_str());
  }

  std::string path_;
};

TEST_F(LoadConfigFileTest, ReadsAValidFile) {
  Result<Config> loaded =
      LoadConfigFile(WriteFile(R"({"task": "tensor", "step": [2]})"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded.value().task, Task::kTensor);
  EXPECT_EQ(loaded.value().steps, std::vector<int64_t>{2});
}

TEST_F(LoadConfigFileTest, InvalidContentErrorNamesThePath) {
  std::string path = WriteFile(R"({"step": 2})");
  Result<Config> loaded = LoadConfigFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            "config: " + path + ": step is invalid, it should be a list");
}

TEST_F(LoadConfigFileTest, MalformedContentErrorNamesThePathAndPosition) {
  std::string path = WriteFile("{\n \"task\": \"tensor\"\n \"step\": []\n}");
  Result<Config> loaded = LoadConfigFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(),
              StartsWith("config: " + path +
                         ": malformed JSON: parse error at line 3, column 7"));
}

TEST_F(LoadConfigFileTest, MissingFileErrorNamesThePath) {
  Result<Config> loaded = LoadConfigFile("/nonexistent/tprobe/config.json");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            "config: cannot open /nonexistent/tprobe/config.json: No such "
            "file or directory");
}

TEST_F(LoadConfigFileTest, DirectoryErrorNamesThePath) {
  Result<Config> loaded = LoadConfigFile(TPROBE_SOURCE_DIR "/tests");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(),
              StartsWith("config: cannot read " TPROBE_SOURCE_DIR "/tests: "));
}

// The configs the golden msprobe dumps were made with.
class GoldenConfigTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenConfigTest, Parses) {
  const std::string level = GetParam();
  Result<Config> loaded = LoadConfigFile(
      TPROBE_SOURCE_DIR "/tests/data/golden/" + level + "/config.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Config expected;
  expected.dump_path = "./dump";
  expected.level = level == "L0"   ? Level::kL0
                   : level == "L1" ? Level::kL1
                                   : Level::kMix;
  EXPECT_EQ(loaded.value(), expected);
  EXPECT_EQ(LevelName(loaded.value().level), level);
}

INSTANTIATE_TEST_SUITE_P(Msprobe, GoldenConfigTest,
                         ::testing::Values("L0", "L1", "mix"));

// docs/configuration.md's key table is KeyTableMarkdown's, from
// TPROBE_CONFIG_KEYS: a key added to the table fails here until the
// document has its row (paste the expected table over the old one).
TEST(ConfigKeysTest, TheDocumentsKeyTableIsTheSchemas) {
  std::ifstream file(TPROBE_SOURCE_DIR "/docs/configuration.md");
  ASSERT_TRUE(file.is_open());
  std::string line, table;
  bool in_table = false;
  while (std::getline(file, line)) {
    if (line.starts_with("| Key | Where |")) in_table = true;
    if (in_table && !line.starts_with("|")) break;
    if (in_table) table += line + "\n";
  }
  EXPECT_EQ(table, KeyTableMarkdown());
}

// A running training keeps its "tprobe" section: the first such key that
// differs is named with both values, as config.json writes them.
TEST(ConfigKeysTest, FixedKeyChangeNamesTheFirstFixedKeyThatDiffers) {
  const Config running;
  Config next = running;
  next.task = Task::kTensor;
  next.steps = {1, 2};
  next.dump_path = "/elsewhere";
  EXPECT_FALSE(FixedKeyChange(running, next).has_value());

  next.ring_bytes = 65536;
  next.policy = FullRingPolicy::kDrop;
  auto change = FixedKeyChange(running, next);
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->key, "tprobe.ring_bytes");
  EXPECT_EQ(change->was, "8388608");
  EXPECT_EQ(change->now, "65536");

  next.ring_bytes = running.ring_bytes;
  change = FixedKeyChange(running, next);
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->key, "tprobe.policy");
  EXPECT_EQ(change->was, "block");
  EXPECT_EQ(change->now, "drop");

  next = running;
  next.socket = "/run/other.sock";
  change = FixedKeyChange(running, next);
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->key, "tprobe.socket");
  EXPECT_EQ(change->was, "");
  EXPECT_EQ(change->now, "/run/other.sock");

  next = running;
  next.statistics_on = StatisticsOn::kDaemon;
  change = FixedKeyChange(running, next);
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->key, "tprobe.statistics_on");
  EXPECT_EQ(change->now, "daemon");
}

}  // namespace
}  // namespace tprobe::config
