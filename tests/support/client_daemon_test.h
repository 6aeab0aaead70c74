#ifndef TPROBE_TESTS_SUPPORT_CLIENT_DAEMON_TEST_H_
#define TPROBE_TESTS_SUPPORT_CLIENT_DAEMON_TEST_H_

// DaemonTest (daemon_test.h) for tests of the public C++ Client
// (tprobe/client.h): Clients of a config file, connected to the test's
// daemon (started with StartDaemon).
//
// Thread safety: the test's thread only, as any gtest fixture.

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "tests/support/daemon_test.h"
#include "tprobe/client.h"

namespace tprobe::testing {

class ClientDaemonTest : public DaemonTest {
 protected:
  // The options of a Client of the config file `config` on Socket() as rank
  // `rank`.
  ClientOptions Options(const std::string& config, int rank = -1) const {
    ClientOptions options;
    options.config_path = config;
    options.socket_path = Socket();
    options.rank = rank;
    return options;
  }

  // A Client of Options(config, rank); nullptr, with a test failure, when
  // Create fails, and a test failure when it is not connected.
  std::unique_ptr<Client> Connect(const std::string& config, int rank = -1) {
    std::string error;
    auto client = Client::Create(Options(config, rank), &error);
    EXPECT_TRUE(client) << error;
    if (client) {
      EXPECT_TRUE(client->connected());
    }
    return client;
  }

  // A Client of task statistics at `level` into Dump().
  std::unique_ptr<Client> Make(const std::string& level, int rank = -1) {
    const std::string config = dir_.path() + "/config_" + level + ".json";
    std::ofstream(config) << R"({"task": "statistics", "dump_path": ")"
                          << Dump() << R"(", "level": ")" << level << R"("})";
    return Connect(config, rank);
  }
};

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_SUPPORT_CLIENT_DAEMON_TEST_H_
