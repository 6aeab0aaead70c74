#include "daemon/process/flags.h"

#include <gtest/gtest.h>

#include <vector>

namespace tprobe::daemon {
namespace {

Result<Flags> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "tprobed");
  return ParseFlags(static_cast<int>(args.size()), args.data());
}

TEST(FlagsTest, DefaultsAreBackgroundInfoAndNoIdleExit) {
  auto f = Parse({"--socket", "/run/t/s.sock"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->socket, "/run/t/s.sock");
  EXPECT_FALSE(f->foreground);
  EXPECT_EQ(f->log_level, spdlog::level::info);
  EXPECT_EQ(f->idle_exit.count(), 0);
  EXPECT_FALSE(f->help);
}

TEST(FlagsTest, AcceptsSeparateAndInlineValues) {
  auto f = Parse({"--socket=/a/b.sock", "--foreground", "--log-level", "debug",
                  "--idle-exit=10"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->socket, "/a/b.sock");
  EXPECT_TRUE(f->foreground);
  EXPECT_EQ(f->log_level, spdlog::level::debug);
  EXPECT_EQ(f->idle_exit.count(), 10);
}

TEST(FlagsTest, RelativeSocketIsAnchoredAtTheWorkingDirectory) {
  auto f = Parse({"--socket", "run/s.sock"});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->socket.starts_with("/"));
  EXPECT_TRUE(f->socket.ends_with("/run/s.sock"));
}

TEST(FlagsTest, ErrorsNameTheFlagAndWhatIsAccepted) {
  EXPECT_EQ(Parse({"--verbose"}).status().message(),
            "unknown option '--verbose'");
  EXPECT_EQ(Parse({"msprobe"}).status().message(),
            "unexpected argument 'msprobe'");
  EXPECT_EQ(Parse({"--log-level", "loud"}).status().message(),
            "bad --log-level 'loud': use trace, debug, info, warn or error");
  EXPECT_EQ(Parse({"--idle-exit", "5s"}).status().message(),
            "bad --idle-exit '5s': use a whole number of seconds from 0 to "
            "86400");
  EXPECT_EQ(Parse({"--socket"}).status().message(), "--socket needs a value");
  EXPECT_EQ(Parse({"--socket", "a", "--socket", "b"}).status().message(),
            "--socket given twice");
  EXPECT_EQ(Parse({"--foreground=yes"}).status().message(),
            "--foreground takes no value");
}

TEST(FlagsTest, HelpExplainsEveryFlag) {
  auto f = Parse({"--help"});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->help);
  const std::string usage = Usage();
  for (const char* flag :
       {"--socket", "--foreground", "--log-level", "--idle-exit", "--group",
        "--max-connections", "--request-timeout", "--expect-ranks",
        "--max-open-steps", "--max-open-bytes", "--help", "msprobe"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

TEST(FlagsTest, ConnectionLimitsAndGroupAreParsedAndChecked) {
  auto f = Parse({"--group", "ml", "--max-connections=8", "--request-timeout",
                  "5", "--expect-ranks", "4"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->group, "ml");
  EXPECT_EQ(f->max_connections, 8);
  EXPECT_EQ(f->request_timeout.count(), 5);
  EXPECT_EQ(f->expect_ranks, 4);
  auto d = Parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->group, "");
  EXPECT_EQ(d->max_connections, 256);
  EXPECT_EQ(d->request_timeout.count(), 30);
  EXPECT_EQ(d->expect_ranks, 0);
  EXPECT_EQ(Parse({"--max-connections", "0"}).status().message(),
            "bad --max-connections '0': use a whole number from 1 to 1048576");
  EXPECT_EQ(Parse({"--request-timeout", "0"}).status().message(),
            "bad --request-timeout '0': use a whole number of seconds from 1 "
            "to 3600");
  EXPECT_EQ(Parse({"--group", ""}).status().message(),
            "--group needs a group name");
}

TEST(FlagsTest, OpenStepBoundIsParsedAndChecked) {
  auto f = Parse({"--max-open-steps=8"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->max_open_steps, 8u);
  EXPECT_EQ(Parse({})->max_open_steps, 64u);
  EXPECT_EQ(Parse({"--max-open-steps", "0"}).status().message(),
            "bad --max-open-steps '0': use a whole number from 1 to 65536");
  auto b = Parse({"--max-open-bytes=8388608"});
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->max_open_bytes, uint64_t{8} << 20);
  EXPECT_EQ(Parse({})->max_open_bytes, uint64_t{1} << 30);
  EXPECT_EQ(Parse({"--max-open-bytes", "1000"}).status().message(),
            "bad --max-open-bytes '1000': use a byte count from 1048576 to "
            "1099511627776");
}

TEST(FlagsTest, LogFileSitsBesideTheSocket) {
  EXPECT_EQ(LogFilePath("/run/user/1/tprobe/tprobed.sock"),
            "/run/user/1/tprobe/tprobed.log");
}

}  // namespace
}  // namespace tprobe::daemon
