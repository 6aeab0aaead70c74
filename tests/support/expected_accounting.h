#ifndef TPROBE_TESTS_SUPPORT_EXPECTED_ACCOUNTING_H_
#define TPROBE_TESTS_SUPPORT_EXPECTED_ACCOUNTING_H_

// A step's tprobe.json as tests expect it byte for byte: the text spelled
// out here, key by key in the order docs/format.md gives, independent of
// the code that writes it (common/dump/tree.cc). Only the fields tests vary
// are parameters; every count not named is 0.

#include <cstdint>
#include <optional>
#include <string>

namespace tprobe::testing {

struct ExpectedAccounting {
  bool complete = true;
  uint64_t entries = 0;
  bool stream_corrupt = false;
  bool producer_died = false;
  // The daemon's own count of a step no Step settled (the rank died or the
  // daemon stopped): the "records" block, with this many records produced
  // and written and none dropped. Absent: a Step settled it.
  std::optional<uint64_t> daemon_counted;

  std::string Text() const {
    const auto boolean = [](bool b) {
      return std::string(b ? "true" : "false");
    };
    std::string records;
    if (daemon_counted) {
      const std::string n = std::to_string(*daemon_counted);
      records = R"(,
 "records": {
  "counted_by": "daemon",
  "produced": )" +
                n + R"(,
  "written": )" +
                n + R"(,
  "dropped": {
   "ring_full": 0,
   "too_large": 0,
   "no_daemon": 0,
   "daemon_gone": 0,
   "skipped": 0,
   "unread": 0
  }
 })";
    }
    return R"({
 "complete": )" +
           boolean(complete) + R"(,
 "entries": )" +
           std::to_string(entries) + R"(,
 "duplicates_dropped": 0,
 "tensors_incomplete": 0,
 "records_skipped": 0,
 "calls_unclosed": 0,
 "dropped": {
  "ring_full": 0,
  "too_large": 0,
  "no_daemon": 0
 },
 "stream_corrupt": )" +
           boolean(stream_corrupt) + R"(,
 "producer_died": )" +
           boolean(producer_died) + R"(,
 "step_open": false,
 "recovered": false)" +
           records + R"(
})";
  }
};

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_SUPPORT_EXPECTED_ACCOUNTING_H_
