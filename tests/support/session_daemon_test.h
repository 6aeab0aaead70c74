#ifndef TPROBE_TESTS_SUPPORT_SESSION_DAEMON_TEST_H_
#define TPROBE_TESTS_SUPPORT_SESSION_DAEMON_TEST_H_

// DaemonTest (daemon_test.h) for tests of the client core's Session
// (client/session.h): sessions of a config, connected to the test's daemon.
// The daemon is started by SetUp.
//
// Thread safety: the test's thread only, as any gtest fixture.

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "client/session.h"
#include "tests/support/daemon_test.h"

namespace tprobe::testing {

class SessionDaemonTest : public DaemonTest {
 protected:
  void SetUp() override { ASSERT_TRUE(StartDaemon()); }

  // A session with `config` (the JSON text; dump_path Dump() is added)
  // connected to this test's daemon; nullptr, with a test failure, when
  // Create fails, and a test failure when it is not connected.
  std::unique_ptr<client::Session> Open(const std::string& config) {
    const std::string path = dir_.path() + "/config.json";
    std::ofstream(path) << config.substr(0, config.rfind('}'))
                        << R"(, "dump_path": ")" << Dump() << R"("})";
    client::SessionOptions options;
    options.config_path = path;
    options.socket_path = Socket();
    auto session = client::Session::Create(options);
    EXPECT_TRUE(session.ok()) << session.status().message();
    if (!session.ok()) return nullptr;
    EXPECT_TRUE(session.value()->connected());
    return std::move(session).value();
  }
};

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_SUPPORT_SESSION_DAEMON_TEST_H_
