#ifndef TPROBE_TESTS_DAEMON_DRAIN_FIXTURE_H_
#define TPROBE_TESTS_DAEMON_DRAIN_FIXTURE_H_

// The fixture of the drain tests: producers built in the test process
// (test_producer.h) dump into a temporary folder, drained on the test's
// thread with a silent logger, and the tests read the files of rank 0.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/dump/json_writer.h"
#include "daemon/ingest/drain.h"
#include "daemon/process/logger.h"
#include "tests/daemon/test_rank.h"
#include "tests/support/daemon_process.h"

namespace tprobe::testing {

class DrainFixture : public ::testing::Test {
 protected:
  // Drains everything, then closes and writes every step.
  void DrainAndWrite(TestRank& p) {
    auto state = p->Lock();
    daemon::DrainSome(*p, *state, 0, *log_);
    ASSERT_TRUE(state->assembler.Finish(UINT32_MAX).ok());
  }
  std::string File(const std::string& name, uint32_t step = 0) const {
    return dir_.path() + "/step" + std::to_string(step) + "/rank0/" + name;
  }
  dump::Json Dump(uint32_t step = 0) const {
    return dump::Json::parse(ReadFile(File("dump.json", step)));
  }
  dump::Json Accounting(uint32_t step = 0) const {
    return dump::Json::parse(ReadFile(File("tprobe.json", step)));
  }
  // The names of dump.json's entries, in the order written.
  std::vector<std::string> Order(uint32_t step = 0) const {
    std::vector<std::string> order;
    const dump::Json doc = Dump(step);
    for (const auto& [name, body] : doc["data"].items()) {
      order.push_back(name);
    }
    return order;
  }

  TempDir dir_;
  daemon::Logger log_ = daemon::MakeLogger(spdlog::level::off);
};

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_DAEMON_DRAIN_FIXTURE_H_
