#ifndef TPROBE_TESTS_SUPPORT_DAEMON_TEST_H_
#define TPROBE_TESTS_SUPPORT_DAEMON_TEST_H_

// The fixture of tests that drive a real tprobed: a temp directory of the
// test's own, the daemon's socket in it, the daemon started on demand, and
// ranks played by raw clients (tests/daemon/raw_client.h) registered with
// it. The daemon stops (SIGTERM) when the test ends, after the test's own
// clients closed.
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

#include "common/shm/segment.h"
#include "tests/daemon/raw_client.h"
#include "tests/daemon/ring_records.h"
#include "tests/support/daemon_process.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::testing {

// A rank played by a raw client: connected, registered, and holding the
// segment the daemon made for it.
struct RawRank {
  explicit RawRank(const std::string& socket) : client(socket) {}
  // A writer for ring `ring`, as the rank's hook thread would hold it.
  RecordWriter Writer(uint32_t ring = 0) const {
    return RecordWriter(segment->ring_header(ring), segment->ring_data(ring));
  }

  RawClient client;
  std::unique_ptr<shm::Segment> segment;
};

class DaemonTest : public ::testing::Test {
 protected:
  // `socket_name`: the socket's path under the test's directory.
  explicit DaemonTest(std::string socket_name = "tprobed.sock")
      : socket_name_(std::move(socket_name)) {}

  std::string Socket() const { return dir_.path() + "/" + socket_name_; }
  // The dump path of the default registration, and a file of rank 0's
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

  // Connects a raw client to Socket() and registers `reg`. nullptr, with a
  // test failure that says why, when either fails.
  std::unique_ptr<RawRank> Register(const v1::Register& reg) const {
    auto rank = std::make_unique<RawRank>(Socket());
    EXPECT_TRUE(rank->client.connected()) << "nothing answers on " << Socket();
    std::string error;
    rank->segment = rank->client.Register(reg, &error);
    EXPECT_NE(rank->segment, nullptr) << error;
    if (rank->segment == nullptr) return nullptr;
    return rank;
  }
  // The default registration: rank 0 of this process, task statistics at
  // level mix into Dump().
  std::unique_ptr<RawRank> Register() const {
    return Register(MakeRegister(ConfigJson(Dump())));
  }

  TempDir dir_;
  std::optional<DaemonProcess> daemon_;

 private:
  std::string socket_name_;
};

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_SUPPORT_DAEMON_TEST_H_
