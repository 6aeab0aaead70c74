#ifndef TPROBE_TESTS_SUPPORT_DAEMON_TEST_H_
#define TPROBE_TESTS_SUPPORT_DAEMON_TEST_H_

// The fixture of tests that drive a real tprobed: a temp directory of the
// test's own, the daemon's socket in it and the daemon, started on demand.
// The daemon stops (SIGTERM) when the test ends, after the test's own
// clients closed. Ranks played by raw clients: raw_rank_test.h.
//
// The including test must define TPROBED_PATH (tests/CMakeLists.txt:
// tprobe_add_test(... RUNS tprobed)).
//
// Thread safety: the test's thread only, as any gtest fixture.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"

namespace tprobe::testing {

class DaemonTest : public ::testing::Test {
 protected:
  // `socket_name`: the socket's path under the test's directory.
  explicit DaemonTest(std::string socket_name = "tprobed.sock")
      : socket_name_(std::move(socket_name)) {}

  std::string Socket() const { return dir_.path() + "/" + socket_name_; }
  // The test's dump path (RawRankTest::Register()'s), and a file of rank 0's
  // step `step` in it.
  std::string Dump() const { return dir_.path() + "/dump"; }
  std::string DumpFile(const std::string& name, uint32_t step = 0) const {
    return Dump() + "/step" + std::to_string(step) + "/rank0/" + name;
  }

  // The daemon's command line: DaemonArgv on Socket(), then `extra`.
  std::vector<std::string> DaemonCommand(
      const std::vector<std::string>& extra = {}) const {
    return DaemonArgv(TPROBED_PATH, Socket(), extra);
  }
  // Starts tprobed (DaemonCommand(extra)) in daemon_, stopping one started
  // before. False, with a test failure, when it does not answer.
  bool StartDaemon(const std::vector<std::string>& extra = {}) {
    daemon_.reset();
    daemon_.emplace(DaemonCommand(extra), Socket());
    EXPECT_TRUE(daemon_->started()) << "tprobed did not start on " << Socket();
    return daemon_->started();
  }

  TempDir dir_;
  std::optional<DaemonProcess> daemon_;

 private:
  std::string socket_name_;
};

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_SUPPORT_DAEMON_TEST_H_
