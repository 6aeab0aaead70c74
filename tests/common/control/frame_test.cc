// common/control/frame.cc: the control protocol's frames over a real
// socket pair.

#include "common/control/frame.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "tprobe/v1/control.pb.h"

namespace tprobe::control {
namespace {

using Clock = std::chrono::steady_clock;

class FrameTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds_), 0);
  }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  Deadline Soon() const { return Clock::now() + std::chrono::seconds(5); }
  int fds_[2] = {-1, -1};
};

TEST_F(FrameTest, AFrameIsTheLittleEndianSizeThenTheMessage) {
  v1::Request request;
  request.set_version(1);
  request.mutable_start()->set_step(300);
  const std::string frame = EncodeFrame(request);
  const std::string body = request.SerializeAsString();
  ASSERT_EQ(frame.size(), kFrameHeaderBytes + body.size());
  EXPECT_EQ(frame.substr(0, 4),
            std::string({static_cast<char>(body.size()), '\0', '\0', '\0'}));
  EXPECT_EQ(frame.substr(4), body);
  const unsigned char header[4] = {0x04, 0x03, 0x02, 0x81};
  EXPECT_EQ(FrameBodySize(header), 0x81020304u);
}

TEST_F(FrameTest, WhatIsWrittenIsRead) {
  v1::Request request;
  request.set_version(1);
  request.mutable_configure()->mutable_config()->set_dump_path(
      std::string(300000, 'd'));  // more than one socket buffer at a time
  v1::Request read;
  FrameResult r;
  std::thread reader(
      [&] { r = ReadFrame(fds_[1], &read, Soon(), kMaxFrameBytes); });
  ASSERT_TRUE(WriteFrame(fds_[0], request, Soon()).ok());
  reader.join();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(read.configure().config().dump_path(),
            request.configure().config().dump_path());
}

TEST_F(FrameTest, AnOversizedHeaderIsRefusedBeforeTheBody) {
  const unsigned char huge[4] = {0xff, 0xff, 0xff, 0xff};
  ASSERT_EQ(::write(fds_[0], huge, 4), 4);
  v1::Response response;
  const FrameResult r = ReadFrame(fds_[1], &response, Soon(), 1 << 20);
  EXPECT_EQ(r.error, FrameError::kTooLarge);
  EXPECT_EQ(r.body_size, 0xffffffffu);
}

TEST_F(FrameTest, SilenceTimesOutAndAHangUpIsClosed) {
  v1::Response response;
  EXPECT_EQ(ReadFrame(fds_[1], &response, Clock::now(), kMaxFrameBytes).error,
            FrameError::kTimeout);
  const std::string garbage("\x03\0\0\0\xff\xff\xff", 7);
  ASSERT_EQ(::write(fds_[0], garbage.data(), 4 + 3), 7);
  EXPECT_EQ(ReadFrame(fds_[1], &response, Soon(), kMaxFrameBytes).error,
            FrameError::kMalformed);
  ::close(fds_[0]);
  fds_[0] = -1;
  EXPECT_EQ(ReadFrame(fds_[1], &response, Soon(), kMaxFrameBytes).error,
            FrameError::kClosed);
  EXPECT_EQ(WriteFrame(fds_[1], response, Soon()).error, FrameError::kReset);
}

}  // namespace
}  // namespace tprobe::control
