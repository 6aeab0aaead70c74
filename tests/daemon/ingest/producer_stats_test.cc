// The ProducerStats record (record.h) through the drain, on real ring
// memory: statistics the producer computed render as the daemon's own,
// entries wait for them in call order, statistics may come before their
// tensor from another ring, a step settled without them is incomplete, and
// a malformed record costs its producer alone.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "common/stats/crc32.h"
#include "tests/daemon/drain_fixture.h"
#include "tests/daemon/producer_records.h"

namespace tprobe::daemon {
namespace {

using testing::AwaitingTensor;
using testing::Bits;
using testing::ConfigJson;
using ::testing::HasSubstr;
using testing::List;
using testing::MakeEntry;
using testing::MakeRegister;
using testing::PutStats;
using testing::Ref;
using testing::Stats;
using testing::TempDir;
using testing::TestRank;

constexpr auto kB = static_cast<uint8_t>(record::StatKind::kBool);
constexpr auto kN = static_cast<uint8_t>(record::StatKind::kNull);

// A checksum record: its first statistic alone, of `kind`.
record::ProducerStatsRecord Checksum(uint32_t ref, record::StatKind kind,
                                     uint64_t value) {
  record::ProducerStatsRecord r{};
  r.ref = ref;
  r.kinds[0] = static_cast<uint8_t>(kind);
  r.values[0] = value;
  return r;
}

// Drains a producer under `summary_mode` whose one float32 tensor of shape
// {1} (ref 6, ring 0) is followed by `records` on ring 1; returns why its
// stream was found corrupt ("" when it was not).
std::string CorruptionOf(
    const std::string& summary_mode,
    const std::vector<record::ProducerStatsRecord>& records,
    spdlog::logger& log) {
  TempDir dir;
  TestRank p(
      MakeRegister(ConfigJson(dir.path(), "statistics", "mix",
                              R"({"summary_mode": ")" + summary_mode + R"("})"),
                   2));
  EXPECT_TRUE(p);
  if (!p) return "";
  auto w = p.Writer(0);
  EXPECT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  EXPECT_TRUE(AwaitingTensor(w, 6, DType::kFloat32, {1}, 4));
  EXPECT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(6)})}})));
  auto s = p.Writer(1);
  for (const record::ProducerStatsRecord& r : records) {
    EXPECT_TRUE(PutStats(s, r));
  }
  auto state = p->Lock();
  DrainSome(*p, *state, 0, log);
  return state->broken ? state->last_error : "";
}

using ProducerStatsTest = testing::DrainFixture;

TEST_F(ProducerStatsTest, ProducerStatisticsRenderAsTheDaemonsOwn) {
  // The same tensor twice: once with its bytes, once with statistics the
  // producer computed; dump.json must hold the same bytes for both.
  TestRank p(MakeRegister(ConfigJson(dir_.path()), /*ring_count=*/2));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  auto stats = p.Writer(1);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "B"));
  ASSERT_TRUE(w.Float32Tensor(5, {2, 2}, {-1.0f, 2.0f, -2.0f, 4.0f}));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5)})}})));
  ASSERT_TRUE(AwaitingTensor(w, 6, DType::kFloat32, {2, 2}, 16));
  ASSERT_TRUE(w.Entry(2, 0, 2, 0, MakeEntry({{"output", List({Ref(6)})}})));
  ASSERT_TRUE(PutStats(stats, Stats(0, 6, {4.0, -2.0, 0.75, 5.0})));
  auto state = p->Lock();
  DrainSome(*p, *state, 0, *log_);
  EXPECT_FALSE(state->broken) << state->last_error;
  ASSERT_TRUE(state->assembler.Finish(UINT32_MAX).ok());
  const dump::Json doc = Dump();
  ASSERT_TRUE(doc["data"]["A"]["output"][0]["Max"].is_number());
  EXPECT_EQ(doc["data"]["A"].dump(), doc["data"]["B"].dump());
  EXPECT_EQ(Accounting()["complete"], true);
}

// Under summary_mode xor the producer sends msprobe's checksum: a word for
// a tensor (as the daemon XORs the bytes), a 0-d float's value; each
// renders as the daemon's own, and anything else costs the producer.
TEST_F(ProducerStatsTest, XorChecksumsRenderAsTheDaemonsOwn) {
  const std::string config = ConfigJson(dir_.path(), "statistics", "mix",
                                        R"({"summary_mode": "xor"})");
  TestRank p(MakeRegister(config, /*ring_count=*/2));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  auto stats = p.Writer(1);
  const std::vector<float> values = {-1.0f, 2.0f, -2.0f};
  uint64_t words[2] = {};
  std::memcpy(words, values.data(), sizeof(float) * values.size());
  using record::StatKind;
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "B"));
  ASSERT_TRUE(w.Intern(3, record::InternKind::kName, "C"));
  ASSERT_TRUE(w.Intern(4, record::InternKind::kName, "D"));
  ASSERT_TRUE(w.Float32Tensor(5, {3}, values));
  ASSERT_TRUE(w.Float32Tensor(7, {}, {0.5f}));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5)})}})));
  ASSERT_TRUE(w.Entry(3, 0, 3, 0, MakeEntry({{"output", List({Ref(7)})}})));
  ASSERT_TRUE(AwaitingTensor(w, 6, DType::kFloat32, {3}, 12));
  ASSERT_TRUE(AwaitingTensor(w, 8, DType::kFloat32, {}, 4));
  ASSERT_TRUE(w.Entry(2, 0, 2, 0, MakeEntry({{"output", List({Ref(6)})}})));
  ASSERT_TRUE(w.Entry(4, 0, 4, 0, MakeEntry({{"output", List({Ref(8)})}})));
  ASSERT_TRUE(
      PutStats(stats, Checksum(6, StatKind::kXor, words[0] ^ words[1])));
  ASSERT_TRUE(PutStats(stats, Checksum(8, StatKind::kFloat, Bits(0.5))));
  DrainAndWrite(p);
  const dump::Json doc = Dump();
  ASSERT_TRUE(doc["data"]["A"]["output"][0]["md5"].is_string());
  EXPECT_EQ(doc["data"]["A"].dump(), doc["data"]["B"].dump());
  EXPECT_EQ(doc["data"]["C"]["output"][0]["md5"], 0.5);
  EXPECT_EQ(doc["data"]["C"].dump(), doc["data"]["D"].dump());
  EXPECT_EQ(Accounting()["complete"], true);

  // Statistics where a checksum is due, a number for a tensor with
  // dimensions, and an xor word where statistics are due.
  const std::string not_xor =
      "are not an xor checksum of a torch.float32 tensor";
  EXPECT_THAT(CorruptionOf("xor", {Stats(0, 6, {1.0, 1.0, 1.0, 1.0})}, *log_),
              HasSubstr(not_xor));
  EXPECT_THAT(
      CorruptionOf("xor", {Checksum(6, StatKind::kFloat, Bits(1.0))}, *log_),
      HasSubstr(not_xor));
  EXPECT_THAT(
      CorruptionOf("statistics", {Checksum(6, StatKind::kXor, 1)}, *log_),
      HasSubstr("producer statistics of kind 4 for a torch.float32 tensor"));
}

// Under summary_mode md5 the producer sends two records, in either order:
// the statistics and the CRC-32 of the tensor's bytes; together they
// render as the daemon's own, and a bad or repeated one costs the
// producer.
TEST_F(ProducerStatsTest, Crc32ChecksumsRenderAsTheDaemonsOwn) {
  auto crc_record = [](uint32_t ref, uint64_t value) {
    return Checksum(ref, record::StatKind::kCrc, value);
  };
  TestRank p(MakeRegister(ConfigJson(dir_.path(), "statistics", "mix",
                                     R"({"summary_mode": "md5"})"),
                          2));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  auto stats = p.Writer(1);
  const std::vector<float> values = {-1.0f, 2.0f, -2.0f};
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "B"));
  ASSERT_TRUE(w.Float32Tensor(5, {3}, values));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(5)})}})));
  ASSERT_TRUE(AwaitingTensor(w, 6, DType::kFloat32, {3}, 12));
  ASSERT_TRUE(w.Entry(2, 0, 2, 0, MakeEntry({{"output", List({Ref(6)})}})));
  const record::ProducerStatsRecord crc =
      crc_record(6, stats::Crc32(std::as_bytes(std::span(values))));
  ASSERT_TRUE(PutStats(stats, crc));
  {
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    EXPECT_EQ(state->held.size(), 1u) << "B waits for its statistics";
  }
  const double mean = static_cast<float>(-1.0 / 3.0);
  ASSERT_TRUE(PutStats(stats, Stats(0, 6, {2.0, -2.0, mean, 3.0})));
  DrainAndWrite(p);
  const dump::Json doc = Dump();
  ASSERT_TRUE(doc["data"]["A"]["output"][0]["md5"].is_string());
  EXPECT_EQ(doc["data"]["A"].dump(), doc["data"]["B"].dump());
  EXPECT_EQ(Accounting()["complete"], true);

  // A value wider than 32 bits, a second CRC-32, statistics twice.
  const record::ProducerStatsRecord once = Stats(0, 6, {1.0, 1.0, 1.0, 1.0});
  const std::vector<
      std::pair<std::vector<record::ProducerStatsRecord>, std::string>>
      cases = {
          {{crc_record(6, uint64_t{1} << 32)}, "are not a CRC-32"},
          {{crc_record(6, 1), crc_record(6, 2)}, "bring a second CRC-32"},
          {{once, once}, "came twice"},
      };
  for (const auto& [records, message] : cases) {
    EXPECT_THAT(CorruptionOf("md5", records, *log_), HasSubstr(message));
  }
}

TEST_F(ProducerStatsTest, EntriesWaitForLateStatisticsInCallOrder) {
  TestRank p(MakeRegister(ConfigJson(dir_.path()), /*ring_count=*/2));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  auto stats = p.Writer(1);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kName, "B"));
  ASSERT_TRUE(AwaitingTensor(w, 6, DType::kBool, {3}, 3));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(6)})}})));
  ASSERT_TRUE(w.Float32Tensor(7, {1, 2}, {1.0f, 2.0f}));
  ASSERT_TRUE(w.Entry(2, 0, 2, 0, MakeEntry({{"output", List({Ref(7)})}})));
  auto state = p->Lock();
  DrainSome(*p, *state, 0, *log_);
  // B needs nothing, but goes after A, which waits.
  EXPECT_EQ(state->held.size(), 2u);
  record::ProducerStatsRecord r{};
  r.ring = 0;
  r.ref = 6;
  r.kinds[0] = kB;
  r.kinds[1] = kB;
  r.kinds[2] = kN;
  r.kinds[3] = kN;
  r.values[0] = 1;
  ASSERT_TRUE(PutStats(stats, r));
  DrainSome(*p, *state, 0, *log_);
  EXPECT_TRUE(state->held.empty());
  ASSERT_TRUE(state->assembler.Finish(UINT32_MAX).ok());
  EXPECT_EQ(Order(), (std::vector<std::string>{"A", "B"}));
  const dump::Json a = Dump()["data"]["A"]["output"][0];
  EXPECT_EQ(a["Max"], true);
  EXPECT_EQ(a["Min"], false);
  EXPECT_TRUE(a["Mean"].is_null());
}

TEST_F(ProducerStatsTest, StatisticsBeforeTheirTensorWaitInTheirRing) {
  TestRank p(MakeRegister(ConfigJson(dir_.path()), /*ring_count=*/2));
  ASSERT_TRUE(p);
  auto stats = p.Writer(0);  // read first
  auto w = p.Writer(1);
  ASSERT_TRUE(PutStats(stats, Stats(1, 9, {1.0, 1.0, 1.0, 1.0})));
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(AwaitingTensor(w, 9, DType::kFloat32, {1}, 4));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(9)})}})));
  auto state = p->Lock();
  DrainSome(*p, *state, 0, *log_);
  EXPECT_FALSE(state->broken) << state->last_error;
  EXPECT_TRUE(state->held.empty());
  ASSERT_TRUE(state->assembler.Finish(UINT32_MAX).ok());
  EXPECT_EQ(Dump()["data"]["A"]["output"][0]["Max"], 1.0);
  EXPECT_EQ(Accounting()["complete"], true);
}

TEST_F(ProducerStatsTest, AStepSettledWithoutItsStatisticsIsIncomplete) {
  TestRank p(MakeRegister(ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
  ASSERT_TRUE(AwaitingTensor(w, 6, DType::kFloat32, {1}, 4));
  ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(6)})}})));
  auto state = p->Lock();
  DrainSome(*p, *state, 0, *log_);
  ReleaseHeldEntries(*p, *state, *log_, 0);
  EXPECT_TRUE(state->held.empty());
  ASSERT_TRUE(state->assembler.Finish(UINT32_MAX).ok());
  EXPECT_EQ(Order(), (std::vector<std::string>{"A"}));
  EXPECT_EQ(Accounting()["complete"], false);
  EXPECT_EQ(Accounting()["tensors_incomplete"], 1);
}

// Each malformed record marks its producer corrupt with a message naming
// the defect, and leaves another producer alone.
TEST_F(ProducerStatsTest, AMalformedRecordCostsThatProducerAlone) {
  struct Case {
    const char* what;
    std::function<void(record::ProducerStatsRecord&)> spoil;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"kind", [](auto& r) { r.kinds[2] = 9; },
       "malformed producer statistics record: unknown kind 9"},
      {"null value", [](auto& r) { r.kinds[3] = kN; },
       "malformed producer statistics record: a null or bool statistic"},
      {"ring", [](auto& r) { r.ring = 7; },
       "producer statistics name ring 7 of 2"},
      {"bool for float",
       [](auto& r) {
         r.kinds[0] = kB;
         r.values[0] = 1;
       },
       "producer statistics of kind 1 for a torch.float32 tensor"},
      {"int for float",
       [](auto& r) {
         r.kinds[0] = static_cast<uint8_t>(record::StatKind::kInt);
       },
       "producer statistics of kind 2 for a torch.float32 tensor"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    TempDir bad_dir;
    TempDir good_dir;
    TestRank bad(MakeRegister(ConfigJson(bad_dir.path()), 2));
    TestRank good(MakeRegister(ConfigJson(good_dir.path()), 2));
    ASSERT_TRUE(bad && good);
    for (TestRank* p : {&bad, &good}) {
      auto w = p->Writer(0);
      ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "A"));
      ASSERT_TRUE(AwaitingTensor(w, 6, DType::kFloat32, {1}, 4));
      ASSERT_TRUE(w.Entry(1, 0, 1, 0, MakeEntry({{"output", List({Ref(6)})}})));
      record::ProducerStatsRecord r = Stats(0, 6, {1.0, 1.0, 1.0, 1.0});
      if (p == &bad) c.spoil(r);
      auto s = p->Writer(1);
      ASSERT_TRUE(PutStats(s, r));
    }
    {
      auto state = bad->Lock();
      DrainSome(*bad, *state, 0, *log_);
      EXPECT_TRUE(state->broken);
      EXPECT_NE(state->last_error.find(c.message), std::string::npos)
          << state->last_error;
    }
    auto state = good->Lock();
    DrainSome(*good, *state, 0, *log_);
    EXPECT_FALSE(state->broken) << state->last_error;
    EXPECT_TRUE(state->held.empty());
  }
  // Statistics for a tensor that does not wait for them, and a record of
  // the wrong size.
  TestRank p(MakeRegister(ConfigJson(dir_.path()), 2));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Float32Tensor(5, {1}, {1.0f}));
  auto s = p.Writer(1);
  ASSERT_TRUE(PutStats(s, Stats(0, 5, {1.0, 1.0, 1.0, 1.0})));
  auto state = p->Lock();
  DrainSome(*p, *state, 0, *log_);
  EXPECT_TRUE(state->broken);
  EXPECT_NE(state->last_error.find("which does not wait for them"),
            std::string::npos)
      << state->last_error;
  EXPECT_FALSE(
      record::Decode(static_cast<uint16_t>(record::RecordType::kProducerStats),
                     std::span<const std::byte>())
          .ok());
}

}  // namespace
}  // namespace tprobe::daemon
