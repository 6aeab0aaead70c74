// The ProducerBytes record (record.h) through the drain, on real ring
// memory (task tensor, the bytes the producer copied to the host without
// waiting): a tensor whose bytes come later from another ring renders and
// is written as if its bytes had followed its Tensor record, entries wait
// for them in call order, bytes that stop early leave the tensor incomplete
// and write no file, and a ProducerBytes record that names a tensor wrongly
// costs its producer alone.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "tests/daemon/drain_fixture.h"
#include "tests/daemon/producer_records.h"

namespace tprobe::daemon {
namespace {

using testing::AwaitingTensor;
using testing::ConfigJson;
using ::testing::HasSubstr;
using testing::List;
using testing::MakeEntry;
using testing::MakeRegister;
using testing::PutBytes;
using testing::ReadFile;
using testing::Ref;
using testing::TestRank;

// A float32 Tensor record whose statistics and bytes the producer sends.
bool AwaitingBytes(testing::RecordWriter& w, uint32_t ref,
                   const std::vector<int64_t>& shape, uint64_t nbytes) {
  return AwaitingTensor(
      w, ref, DType::kFloat32, shape, nbytes,
      record::kTensorStatsByProducer | record::kTensorBytesByProducer);
}

bool PutStats(testing::RecordWriter& w, uint32_t ring, uint32_t ref,
              std::array<double, 4> v) {
  return testing::PutStats(w, testing::Stats(ring, ref, v));
}

using ProducerBytesTest = testing::DrainFixture;

TEST_F(ProducerBytesTest, BytesFromAnotherRingAreWrittenAsTheDaemonsOwn) {
  // The same tensor twice: once with its bytes behind its Tensor record,
  // once with statistics and bytes the producer sent later; both .npy
  // files hold the same bytes and both entries the same text.
  TestRank p(MakeRegister(ConfigJson(dir_.path(), "tensor"), 2));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  auto thread = p.Writer(1);
  const std::vector<float> values = {-1.0f, 2.0f, -2.0f, 4.0f};
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "B"));
  ASSERT_TRUE(w.Float32Tensor(5, {2, 2}, values));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5)})}})));
  ASSERT_TRUE(AwaitingBytes(w, 6, {2, 2}, 16));
  ASSERT_TRUE(w.Entry(2, 0, 2, 0, MakeEntry({{"output", List({Ref(6)})}})));
  {
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    EXPECT_EQ(state->held.size(), 1u);  // B waits
  }
  // The bytes first, then the statistics: B waits until both came.
  ASSERT_TRUE(PutBytes(thread, 0, 6, 16, values));
  {
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    EXPECT_EQ(state->held.size(), 1u);
  }
  ASSERT_TRUE(PutStats(thread, 0, 6, {4.0, -2.0, 0.75, 5.0}));
  {
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    EXPECT_FALSE(state->broken) << state->last_error;
    EXPECT_TRUE(state->held.empty());
    ASSERT_TRUE(state->assembler.Finish(UINT32_MAX).ok());
  }
  const dump::Json doc = Dump();
  dump::Json a = doc["data"]["A"]["output"][0];
  dump::Json b = doc["data"]["B"]["output"][0];
  EXPECT_EQ(b["data_name"], "B.output.0.npy");
  a.erase("data_name");
  b.erase("data_name");
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_EQ(ReadFile(File("dump_tensor_data/A.output.0.npy")),
            ReadFile(File("dump_tensor_data/B.output.0.npy")));
  EXPECT_EQ(Accounting()["complete"], true);
}

TEST_F(ProducerBytesTest, BytesBeforeTheirTensorWaitInTheirRing) {
  TestRank p(MakeRegister(ConfigJson(dir_.path(), "tensor"), 2));
  ASSERT_TRUE(p);
  auto thread = p.Writer(0);  // read first
  auto w = p.Writer(1);
  ASSERT_TRUE(PutStats(thread, 1, 9, {3.0, 3.0, 3.0, 3.0}));
  ASSERT_TRUE(PutBytes(thread, 1, 9, 4, {3.0f}));
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(AwaitingBytes(w, 9, {1}, 4));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(9)})}})));
  DrainAndWrite(p);
  EXPECT_EQ(Dump()["data"]["A"]["output"][0]["data_name"], "A.output.0.npy");
  EXPECT_TRUE(std::filesystem::exists(File("dump_tensor_data/A.output.0.npy")));
  EXPECT_EQ(Accounting()["complete"], true);
}

// Chunks that stop early (the statistics thread's ring was full): the
// tensor is incomplete, gets no file, and the entries after it still go
// in call order.
TEST_F(ProducerBytesTest, BytesThatStopEarlyLeaveTheTensorIncomplete) {
  TestRank p(MakeRegister(ConfigJson(dir_.path(), "tensor"), 2));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  auto thread = p.Writer(1);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "B"));
  ASSERT_TRUE(AwaitingBytes(w, 6, {2}, 8));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(6)})}})));
  ASSERT_TRUE(w.Float32Tensor(7, {1}, {1.0f}));
  ASSERT_TRUE(w.Entry(2, 0, 2, 0, MakeEntry({{"output", List({Ref(7)})}})));
  ASSERT_TRUE(PutStats(thread, 0, 6, {1.0, 1.0, 1.0, 1.0}));
  ASSERT_TRUE(PutBytes(thread, 0, 6, 8, {1.0f}));  // one chunk of two
  // The thread's next record ends them; no step needs to be settled.
  ASSERT_TRUE(thread.Intern(3, record::InternKind::kName, "C"));
  {
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    EXPECT_FALSE(state->broken) << state->last_error;
    EXPECT_TRUE(state->held.empty());
    ASSERT_TRUE(state->assembler.Finish(UINT32_MAX).ok());
  }
  EXPECT_EQ(Order(), (std::vector<std::string>{"A", "B"}));
  EXPECT_FALSE(
      std::filesystem::exists(File("dump_tensor_data/A.output.0.npy")));
  EXPECT_TRUE(std::filesystem::exists(File("dump_tensor_data/B.output.0.npy")));
  EXPECT_EQ(Accounting()["tensors_incomplete"], 1);
  EXPECT_EQ(Accounting()["complete"], false);
}

// Each ProducerBytes record that names a tensor wrongly marks its producer
// corrupt with a message naming the defect, and leaves another producer
// alone.
TEST_F(ProducerBytesTest, AWrongProducerBytesRecordCostsThatProducerAlone) {
  struct Case {
    uint32_t ring, ref;
    uint64_t nbytes;
    bool bytes_flag;  // the tensor awaits its bytes
    const char* message;
  };
  const Case cases[] = {
      {0, 6, 4, true, "state 4 bytes of 8"},
      {0, 6, 8, false, "awaits none"},
      {0, 5, 8, true, "which does not wait for them"},
      {5, 6, 8, true, "name ring 5 of 2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    testing::TempDir dir;
    TestRank p(MakeRegister(ConfigJson(dir.path(), "tensor"), 2));
    ASSERT_TRUE(p);
    auto w = p.Writer(0);
    auto thread = p.Writer(1);
    ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
    ASSERT_TRUE(AwaitingTensor(
        w, 6, DType::kFloat32, {2}, 8,
        record::kTensorStatsByProducer |
            (c.bytes_flag ? record::kTensorBytesByProducer : 0)));
    ASSERT_TRUE(w.Float32Tensor(5, {1}, {1.0f}));  // its bytes came along
    ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(6)})}})));
    ASSERT_TRUE(PutBytes(thread, c.ring, c.ref, c.nbytes, {}));
    TestRank other(MakeRegister(ConfigJson(dir.path(), "tensor")));
    ASSERT_TRUE(other);
    auto ow = other.Writer(0);
    ASSERT_TRUE(ow.Intern(1, record::InternKind::kName, "B"));
    ASSERT_TRUE(ow.Float32Tensor(5, {1}, {1.0f}));
    ASSERT_TRUE(ow.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5)})}})));
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    EXPECT_TRUE(state->broken);
    EXPECT_THAT(state->last_error, HasSubstr(c.message));
    auto other_state = other->Lock();
    DrainSome(*other, *other_state, 0, *log_);
    EXPECT_FALSE(other_state->broken) << other_state->last_error;
  }
}

// The codec: a ProducerBytes record of the wrong size or with its reserved
// word set, and a Tensor record with kTensorBytesByProducer alone, are
// malformed.
TEST(ProducerBytesCodecTest, MalformedRecordsAreRejected) {
  record::ProducerBytesRecord r{};
  r.nbytes = 4;
  auto bytes = std::as_bytes(std::span(&r, 1));
  const auto type = static_cast<uint16_t>(record::RecordType::kProducerBytes);
  EXPECT_TRUE(record::Decode(type, bytes).ok());
  EXPECT_FALSE(record::Decode(type, bytes.first(bytes.size() - 1)).ok());
  r.reserved = 1;
  EXPECT_FALSE(record::Decode(type, std::as_bytes(std::span(&r, 1))).ok());
  std::vector<std::byte> tensor(record::TensorSize(1));
  record::PutTensor(tensor.data(), 1, DType::kFloat32, {{1}}, false, 4,
                    record::kTensorBytesByProducer);
  EXPECT_FALSE(
      record::Decode(static_cast<uint16_t>(record::RecordType::kTensor), tensor)
          .ok());
}

}  // namespace
}  // namespace tprobe::daemon
