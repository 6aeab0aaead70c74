#ifndef TPROBE_TESTS_SUPPORT_RAW_RANK_TEST_H_
#define TPROBE_TESTS_SUPPORT_RAW_RANK_TEST_H_

// DaemonTest (daemon_test.h) with ranks played by raw clients
// (tests/daemon/raw_client.h): connected to the test's daemon and
// registered with it, each holding the segment the daemon made for it.
//
// Thread safety: the test's thread only, as any gtest fixture.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/shm/segment.h"
#include "tests/daemon/raw_client.h"
#include "tests/daemon/ring_records.h"
#include "tests/support/daemon_test.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::testing {

// A rank played by a raw client: connected, registered, and holding the
// segment the daemon made for it.
struct RawRank {
  explicit RawRank(const std::string& socket) : client(socket) {}
  // Connects to `socket` and registers `reg`, asserting nothing (a forked
  // rank may use it): nullptr, with *error saying why, when either fails.
  static std::unique_ptr<RawRank> Open(const std::string& socket,
                                       const v1::Register& reg,
                                       std::string* error) {
    auto rank = std::make_unique<RawRank>(socket);
    if (!rank->client.connected()) {
      *error = "nothing answers on " + socket;
      return nullptr;
    }
    rank->segment = rank->client.Register(reg, error);
    if (rank->segment == nullptr) return nullptr;
    return rank;
  }
  // A writer for ring `ring`, as the rank's hook thread would hold it.
  RecordWriter Writer(uint32_t ring = 0) const {
    return RecordWriter(segment->ring_header(ring), segment->ring_data(ring));
  }

  RawClient client;
  std::unique_ptr<shm::Segment> segment;
};

class RawRankTest : public DaemonTest {
 protected:
  using DaemonTest::DaemonTest;

  // Connects a raw client to Socket() and registers `reg`. nullptr, with a
  // test failure that says why, when either fails.
  std::unique_ptr<RawRank> Register(const v1::Register& reg) const {
    std::string error;
    auto rank = RawRank::Open(Socket(), reg, &error);
    EXPECT_NE(rank, nullptr) << error;
    return rank;
  }
  // The default registration: rank 0 of this process, task statistics at
  // level mix into Dump().
  std::unique_ptr<RawRank> Register() const {
    return Register(MakeRegister(ConfigJson(Dump())));
  }
};

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_SUPPORT_RAW_RANK_TEST_H_
