// OutageNotice (client/outage_notice.h): what the trainer says on stderr
// while no daemon receives its records, driven by a clock of the test's.

#include "client/outage_notice.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace tprobe::client {
namespace {

using ::testing::internal::CaptureStderr;
using ::testing::internal::GetCapturedStderr;
using Clock = OutageNotice::Clock;
using std::chrono::milliseconds;

class OutageNoticeTest : public ::testing::Test {
 protected:
  // Polls at `at` (since the start) with `lost` records lost so far;
  // returns what stderr got.
  std::string Poll(milliseconds at, bool attached, uint64_t lost) {
    CaptureStderr();
    notice_.Poll(start_ + at, attached, [&] {
      ++reads_;
      return lost;
    });
    return GetCapturedStderr();
  }
  OutageNotice notice_{"/run/x/tprobed.sock"};
  const Clock::time_point start_ = Clock::now();
  int reads_ = 0;
};

TEST_F(OutageNoticeTest, AnOutageThatLosesRecordsIsSaidOnceAfterTheDelay) {
  EXPECT_EQ(Poll(milliseconds(0), false, 0), "");
  EXPECT_EQ(Poll(milliseconds(1000), false, 40), "");  // before the delay
  const std::string said = Poll(milliseconds(2100), false, 90);
  EXPECT_TRUE(std::regex_match(
      said,
      std::regex(R"(\[tprobe\] no daemon is reached on /run/x/tprobed.sock)"
                 R"( since \d\d:\d\d:\d\d: 90 records lost so far, nothing)"
                 R"( is dumped; training goes on \(start tprobed on that )"
                 R"(socket, or correct TPROBE_SOCKET; a daemon that comes )"
                 R"(up there is taken up\)\n)")))
      << said;
  const int reads = reads_;
  EXPECT_EQ(Poll(milliseconds(9000), false, 500), "");  // said once
  EXPECT_EQ(reads_, reads);                             // nor read again
  const std::string back = Poll(milliseconds(9500), true, 520);
  EXPECT_NE(back.find("[tprobe] a daemon is reached on /run/x/tprobed.sock; "
                      "520 records were lost without one since "),
            std::string::npos)
      << back;
  EXPECT_EQ(Poll(milliseconds(9600), true, 520), "");
  CaptureStderr();
  notice_.Close(520);
  EXPECT_EQ(GetCapturedStderr(),
            "[tprobe] 520 records of this process were lost in all because "
            "no daemon received them (socket /run/x/tprobed.sock)\n");
}

TEST_F(OutageNoticeTest, AnOutageThatLosesNothingIsNotSaid) {
  EXPECT_EQ(Poll(milliseconds(0), false, 0), "");
  EXPECT_EQ(Poll(milliseconds(5000), false, 0), "");
  EXPECT_EQ(Poll(milliseconds(6000), true, 0), "");
  // Reads are spaced while detached.
  const int reads = reads_;
  EXPECT_EQ(Poll(milliseconds(6010), false, 0), "");
  EXPECT_EQ(Poll(milliseconds(6020), false, 0), "");
  EXPECT_LE(reads_, reads + 1);
  CaptureStderr();
  notice_.Close(0);
  EXPECT_EQ(GetCapturedStderr(), "");
}

TEST_F(OutageNoticeTest, EachOutageIsSaidWithItsOwnCount) {
  Poll(milliseconds(0), false, 0);
  EXPECT_NE(Poll(milliseconds(2500), false, 10), "");
  EXPECT_NE(Poll(milliseconds(3000), true, 10), "");
  EXPECT_EQ(Poll(milliseconds(4000), false, 10), "");  // a new outage
  const std::string said = Poll(milliseconds(6500), false, 25);
  EXPECT_NE(said.find(": 15 records lost so far"), std::string::npos) << said;
}

}  // namespace
}  // namespace tprobe::client
