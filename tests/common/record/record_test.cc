// The one writer (common/record/writer.h) against the one reader
// (common/record/codec.h): every record type and every value kind
// round-trips, and malformed bodies are refused with their defect.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/record/codec.h"
#include "common/record/writer.h"

namespace tprobe::record {
namespace {

std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

// Writes what it sees as text, one event per line.
class Log : public ValueVisitor {
 public:
  void Key(std::string_view k) override { Add("key " + std::string(k)); }
  void Null() override { Add("null"); }
  void Bool(bool v) override { Add(v ? "true" : "false"); }
  void Int(int64_t v) override { Add("int " + std::to_string(v)); }
  void Float(double v) override {
    char bits[8];
    std::memcpy(bits, &v, 8);
    Add("float " + std::to_string(v) + " " + std::string(bits, 8));
  }
  void Str(std::string_view v) override { Add("str " + std::string(v)); }
  void TensorRef(uint32_t r) override { Add("ref " + std::to_string(r)); }
  void BeginList() override { Add("["); }
  void BeginDict() override { Add("{"); }
  void BeginTyped(std::string_view t) override {
    Add("typed " + std::string(t));
  }
  void End() override { Add("end"); }

  std::vector<std::string> events;

 private:
  void Add(std::string e) { events.push_back(std::move(e)); }
};

std::vector<std::string> Read(const std::string& body) {
  Log log;
  Status s = ReadEntryBody(Bytes(body), log);
  EXPECT_TRUE(s.ok()) << s.message();
  return log.events;
}

std::string ReadError(const std::string& body) {
  Log log;
  Status s = ReadEntryBody(Bytes(body), log);
  return s.ok() ? "ok" : s.message();
}

TEST(ValueStreamTest, EveryValueKindRoundTrips) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::string with_nul("a\0b", 3);
  std::string body;
  ValueWriter w(&body);
  w.Key("scalars");
  w.BeginList();
  w.Null();
  w.Bool(false);
  w.Bool(true);
  w.Int(std::numeric_limits<int64_t>::min());
  w.Int(std::numeric_limits<int64_t>::max());
  w.Float(-0.0);
  w.Float(nan);
  w.Float(-inf);
  w.Str("");
  w.Str(with_nul);
  w.Str("\xc3\xa9t\xc3\xa9");
  w.TensorRef(UINT32_MAX);
  w.End();
  w.Key("");  // an empty key
  w.BeginDict();
  w.Key("empty list");
  w.BeginList();
  w.End();
  w.Key("empty dict");
  w.BeginDict();
  w.End();
  w.Key("typed");
  w.Typed("slice");
  w.BeginList();
  w.Int(1);
  w.Typed("int");  // a typed inside a typed's list
  w.Int(2);
  w.End();
  w.Key("nested typed");
  w.Typed("outer");
  w.Typed("inner");
  w.TensorRef(7);
  w.End();

  // Values compose by concatenation (an encoded value is appended as is).
  std::string encoded;
  ValueWriter(&encoded).Str("raw");
  w.Key("raw");
  w.Raw(encoded);

  auto f = [](double v) {
    Log l;
    l.Float(v);
    return l.events[0];
  };
  const std::vector<std::string> expected = {
      "key scalars",
      "[",
      "null",
      "false",
      "true",
      "int " + std::to_string(std::numeric_limits<int64_t>::min()),
      "int " + std::to_string(std::numeric_limits<int64_t>::max()),
      f(-0.0),
      f(nan),
      f(-inf),
      "str ",
      "str " + with_nul,
      "str \xc3\xa9t\xc3\xa9",
      "ref 4294967295",
      "end",
      "key ",
      "{",
      "key empty list",
      "[",
      "end",
      "key empty dict",
      "{",
      "end",
      "key typed",
      "typed slice",
      "[",
      "int 1",
      "typed int",
      "int 2",
      "end",  // the inner typed
      "end",  // the list
      "end",  // the typed slice
      "key nested typed",
      "typed outer",
      "typed inner",
      "ref 7",
      "end",
      "end",
      "end",  // the dict
      "key raw",
      "str raw",
  };
  EXPECT_EQ(Read(body), expected);
}

TEST(ValueStreamTest, AnEmptyBodyHasNoItems) { EXPECT_TRUE(Read("").empty()); }

TEST(ValueStreamTest, MalformedBodiesNameTheirDefect) {
  auto encode = [](auto&& write) {
    std::string b;
    ValueWriter w(&b);
    write(w);
    return b;
  };
  EXPECT_EQ(ReadError(encode([](ValueWriter& w) { w.Int(1); })),
            "malformed entry body at byte 0: an item has no key");
  EXPECT_EQ(ReadError(encode([](ValueWriter& w) { w.Key("k"); })),
            "malformed entry body at byte 6: it ends inside a value");
  EXPECT_EQ(ReadError(encode([](ValueWriter& w) {
              w.Key("k");
              w.BeginList();
            })),
            "malformed entry body at byte 7: it ends inside a value");
  EXPECT_EQ(ReadError(encode([](ValueWriter& w) {
              w.Key("k");
              w.End();
            })),
            "malformed entry body at byte 6: an end where a value belongs");
  EXPECT_EQ(ReadError(encode([](ValueWriter& w) {
              w.Key("k");
              w.BeginList();
              w.Key("x");
            })),
            "malformed entry body at byte 7: a key outside a dict");
  EXPECT_EQ(ReadError(encode([](ValueWriter& w) {
              w.Key("k");
              w.BeginDict();
              w.Null();
            })),
            "malformed entry body at byte 7: an item has no key");
  EXPECT_EQ(ReadError(encode([](ValueWriter& w) {
              w.Key("k");
              w.Typed("t");
              w.End();
            })),
            "malformed entry body at byte 12: an end where a value belongs");
  // Truncated fixed parts and texts.
  std::string s = encode([](ValueWriter& w) {
    w.Key("k");
    w.Int(5);
  });
  s.pop_back();
  EXPECT_EQ(ReadError(s),
            "malformed entry body at byte 6: an int runs past "
            "the end");
  s = encode([](ValueWriter& w) { w.Key("key"); });
  s.pop_back();
  EXPECT_EQ(ReadError(s),
            "malformed entry body at byte 0: a key runs past "
            "the end");
  s = encode([](ValueWriter& w) {
    w.Key("k");
    w.Str("abc");
  });
  s[7] = '\xff';  // a length far past the end
  EXPECT_EQ(ReadError(s),
            "malformed entry body at byte 6: a string runs "
            "past the end");
  s = encode([](ValueWriter& w) { w.Key("k"); });
  s.push_back('\x63');
  EXPECT_EQ(ReadError(s),
            "malformed entry body at byte 6: unknown value tag "
            "99");
}

TEST(ValueStreamTest, NestingIsBounded) {
  auto nested = [](int depth) {
    std::string b;
    ValueWriter w(&b);
    w.Key("k");
    for (int i = 0; i < depth; ++i) w.BeginList();
    for (int i = 0; i < depth; ++i) w.End();
    return b;
  };
  EXPECT_EQ(Read(nested(kMaxValueDepth)).size(), 1u + 2 * kMaxValueDepth);
  EXPECT_EQ(ReadError(nested(kMaxValueDepth + 1)),
            "malformed entry body at byte " +
                std::to_string(6 + kMaxValueDepth) +
                ": values nest deeper than " + std::to_string(kMaxValueDepth));
}

TEST(RecordWriterTest, EveryRecordTypeRoundTrips) {
  std::vector<std::byte> buf(256);

  PutIntern(buf.data(), 9, InternKind::kStack, "a\0b");
  auto d = Decode(static_cast<uint16_t>(RecordType::kIntern),
                  std::span(buf.data(), InternSize("a\0b")));
  ASSERT_TRUE(d.ok());
  const auto& intern = std::get<InternView>(d.value());
  EXPECT_EQ(intern.id, 9u);
  EXPECT_EQ(intern.kind, InternKind::kStack);
  EXPECT_EQ(intern.text, "a");  // a string_view literal stops at the NUL

  PutCall(buf.data(), 77, 3, 9, CallKind::kApi, Direction::kBackward);
  d = Decode(static_cast<uint16_t>(RecordType::kCallEnd),
             std::span(buf.data(), kCallSize));
  ASSERT_TRUE(d.ok());
  const auto& call = std::get<CallView>(d.value());
  EXPECT_FALSE(call.begin);
  EXPECT_EQ(call.call.seq, 77u);
  EXPECT_EQ(call.call.step, 3u);
  EXPECT_EQ(call.call.name_id, 9u);
  EXPECT_EQ(call.call.call_kind, static_cast<uint8_t>(CallKind::kApi));
  EXPECT_EQ(call.call.direction, static_cast<uint8_t>(Direction::kBackward));

  const int64_t shape[] = {2, 3};
  PutTensor(buf.data(), 5, DType::kFloat16, shape, true, 12);
  d = Decode(static_cast<uint16_t>(RecordType::kTensor),
             std::span(buf.data(), TensorSize(2)));
  ASSERT_TRUE(d.ok()) << d.status().message();
  const auto& tensor = std::get<TensorView>(d.value());
  EXPECT_EQ(tensor.tensor.ref, 5u);
  EXPECT_EQ(tensor.dtype, DType::kFloat16);
  EXPECT_EQ(tensor.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensor.tensor.requires_grad, 1);
  EXPECT_EQ(tensor.tensor.nbytes, 12u);

  PutChunkHeader(buf.data(), 5, 4096);
  std::memcpy(buf.data() + sizeof(ChunkRecord), "xyz", 3);
  d = Decode(static_cast<uint16_t>(RecordType::kChunk),
             std::span(buf.data(), ChunkSize(3)));
  ASSERT_TRUE(d.ok());
  const auto& chunk = std::get<ChunkView>(d.value());
  EXPECT_EQ(chunk.chunk.ref, 5u);
  EXPECT_EQ(chunk.chunk.offset, 4096u);
  ASSERT_EQ(chunk.bytes.size(), 3u);
  EXPECT_EQ(std::memcmp(chunk.bytes.data(), "xyz", 3), 0);

  std::string body;
  ValueWriter(&body).Key("output");
  PutEntryHeader(buf.data(), 78, 3, 9, 11);
  std::memcpy(buf.data() + sizeof(EntryRecord), body.data(), body.size());
  d = Decode(static_cast<uint16_t>(RecordType::kEntry),
             std::span(buf.data(), EntrySize(body.size())));
  ASSERT_TRUE(d.ok());
  const auto& entry = std::get<EntryView>(d.value());
  EXPECT_EQ(entry.entry.seq, 78u);
  EXPECT_EQ(entry.entry.step, 3u);
  EXPECT_EQ(entry.entry.name_id, 9u);
  EXPECT_EQ(entry.entry.stack_id, 11u);
  ASSERT_EQ(entry.body.size(), body.size());
  EXPECT_EQ(std::memcmp(entry.body.data(), body.data(), body.size()), 0);

  PutTensor(buf.data(), 6, DType::kInt64, shape, false, 48,
            kTensorStatsByProducer);
  d = Decode(static_cast<uint16_t>(RecordType::kTensor),
             std::span(buf.data(), TensorSize(2)));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(std::get<TensorView>(d.value()).tensor.flags,
            kTensorStatsByProducer);

  ProducerStatsRecord stats{};
  stats.ring = 2;
  stats.ref = 6;
  stats.step = 3;
  stats.kinds[0] = static_cast<uint8_t>(StatKind::kInt);
  stats.kinds[1] = static_cast<uint8_t>(StatKind::kInt);
  stats.values[0] = 9;
  stats.values[1] = static_cast<uint64_t>(-4);
  PutProducerStats(buf.data(), stats);
  d = Decode(static_cast<uint16_t>(RecordType::kProducerStats),
             std::span(buf.data(), kProducerStatsSize));
  ASSERT_TRUE(d.ok()) << d.status().message();
  const auto& back = std::get<ProducerStatsView>(d.value()).stats;
  EXPECT_EQ(back.ring, 2u);
  EXPECT_EQ(back.ref, 6u);
  EXPECT_EQ(back.step, 3u);
  EXPECT_EQ(static_cast<int64_t>(back.values[1]), -4);
}

TEST(RecordWriterTest, MalformedProducerRecordsNameTheirDefect) {
  std::vector<std::byte> buf(256);
  const int64_t shape[] = {2};
  PutTensor(buf.data(), 6, DType::kInt64, shape, false, 16, 2);
  auto d = Decode(static_cast<uint16_t>(RecordType::kTensor),
                  std::span(buf.data(), TensorSize(1)));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "malformed tensor record: unknown flags 2 or requires_grad 0");

  ProducerStatsRecord stats{};
  PutProducerStats(buf.data(), stats);
  d = Decode(static_cast<uint16_t>(RecordType::kProducerStats),
             std::span(buf.data(), kProducerStatsSize - 1));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "malformed producer statistics record: size 47 is not 48");
  stats.kinds[1] = 6;
  PutProducerStats(buf.data(), stats);
  d = Decode(static_cast<uint16_t>(RecordType::kProducerStats),
             std::span(buf.data(), kProducerStatsSize));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "malformed producer statistics record: unknown kind 6");
  stats.kinds[1] = static_cast<uint8_t>(StatKind::kBool);
  stats.values[1] = 2;
  PutProducerStats(buf.data(), stats);
  d = Decode(static_cast<uint16_t>(RecordType::kProducerStats),
             std::span(buf.data(), kProducerStatsSize));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "malformed producer statistics record: a null or bool statistic "
            "with value 2");
}

}  // namespace
}  // namespace tprobe::record
