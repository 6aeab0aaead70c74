// A full disk under a running dump, end to end with the real tprobed and
// CLI: the failed write is reported (the Step's reply, tprobe status), the
// step is kept, and it is written once space returns, its tprobe.json
// telling of the failure. Needs root for a small tmpfs; skipped otherwise.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/control/response.h"
#include "common/dump/json_writer.h"
#include "tests/daemon/raw_client.h"
#include "tests/daemon/ring_records.h"
#include "tests/support/daemon_process.h"
#include "tests/support/raw_rank_test.h"

namespace tprobe {
namespace {

using testing::ConfigJson;
using testing::MakeRegister;
using testing::RawClient;
using testing::ReadFile;
using testing::RunCommand;

class WriteFailureTest : public testing::RawRankTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "needs root to mount a small tmpfs; the full-disk test "
                      "is skipped";
    }
    disk_ = dir_.path() + "/disk";
    std::filesystem::create_directory(disk_);
    if (RunCommand("mount -t tmpfs -o size=2m tmpfs " + disk_, nullptr) != 0) {
      GTEST_SKIP() << "root, but cannot mount a tmpfs here; skipped";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) RunCommand("umount " + disk_, nullptr);
  }
  bool Request(RawClient& client, v1::Request request, v1::Response* reply) {
    return client.Call(std::move(request), reply);
  }

  std::string disk_;
  bool mounted_ = false;
};

TEST_F(WriteFailureTest, AFullDiskIsReportedAndTheStepWrittenWhenSpaceReturns) {
  ASSERT_TRUE(StartDaemon());
  const std::string dump = disk_ + "/dump";
  auto rank = Register(MakeRegister(ConfigJson(dump)));
  ASSERT_NE(rank, nullptr);
  RawClient& client = rank->client;
  testing::RecordWriter w = rank->Writer();
  ASSERT_TRUE(
      w.Intern(1, record::InternKind::kName, "Functional.relu.0.forward"));
  const std::vector<float> values = {1, -2, 3, 4};
  ASSERT_TRUE(w.Tensor(1, DType::kFloat32, {4}, false, sizeof(float) * 4));
  ASSERT_TRUE(w.Chunk(1, 0, values.data(), sizeof(float) * 4));
  ASSERT_TRUE(w.Entry(
      1, 0, 1, 0,
      testing::MakeEntry({{"input_args", testing::List({testing::Ref(1)})},
                          {"output", testing::List({})}})));

  // Fill the disk, then end the step.
  RunCommand("dd if=/dev/zero of=" + disk_ + "/filler bs=64k", nullptr);
  ASSERT_TRUE(w.Boundary(testing::StepRequest(0)));
  // A Flush is answered once the steps closed before it are written: here,
  // with the failure.
  v1::Request flush;
  flush.mutable_flush();
  v1::Response reply;
  ASSERT_TRUE(client.Call(flush, &reply));
  EXPECT_FALSE(control::IsOk(reply));
  EXPECT_NE(reply.error().find("No space left on device"), std::string::npos)
      << reply.error();
  std::string status;
  EXPECT_EQ(RunCommand(std::string(TPROBE_BIN) + " status --socket " + Socket(),
                       &status),
            0);
  EXPECT_NE(status.find("cannot write the dump: "), std::string::npos)
      << status;
  EXPECT_NE(status.find("No space left on device"), std::string::npos)
      << status;

  // Space returns: the kept step is written by the next flush.
  std::filesystem::remove(disk_ + "/filler");
  ASSERT_TRUE(client.Call(flush, &reply));
  EXPECT_TRUE(control::IsOk(reply)) << reply.error();
  const auto accounting =
      dump::Json::parse(ReadFile(dump + "/step0/rank0/tprobe.json"));
  EXPECT_GE(accounting["write_failures"].get<int>(), 1) << accounting.dump();
  EXPECT_NE(accounting["last_write_error"].get<std::string>().find(
                "No space left on device"),
            std::string::npos);
  EXPECT_EQ(accounting["tensor_files_lost"], 0);
  EXPECT_EQ(accounting["complete"], true)
      << "the data was kept and written: nothing was lost";
  const auto doc = dump::Json::parse(ReadFile(dump + "/step0/rank0/dump.json"));
  EXPECT_EQ(doc["data"]["Functional.relu.0.forward"]["input_args"][0]["Max"],
            4.0);
  EXPECT_EQ(doc["data"]["Functional.relu.0.forward"]["input_args"][0]["Min"],
            -2.0);
  // The step is finished: it is not written again, and later data for it
  // counts as late.
  EXPECT_FALSE(std::filesystem::exists(dump + "/step1"));
}

}  // namespace
}  // namespace tprobe
