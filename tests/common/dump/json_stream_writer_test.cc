#include "common/dump/json_stream_writer.h"

#include <gtest/gtest.h>

#include <limits>

namespace tprobe::dump {
namespace {

// Streams `v` into `writer`, event by event.
void Stream(const Json& v, JsonStreamWriter& writer) {
  switch (v.type()) {
    case Json::value_t::null:
      writer.Null();
      return;
    case Json::value_t::boolean:
      writer.Bool(v.get<bool>());
      return;
    case Json::value_t::number_integer:
      writer.Int(v.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      writer.Uint(v.get<uint64_t>());
      return;
    case Json::value_t::number_float:
      writer.Float(v.get<double>());
      return;
    case Json::value_t::string:
      writer.String(v.get_ref<const std::string&>());
      return;
    case Json::value_t::array:
      writer.BeginList();
      for (const Json& item : v) Stream(item, writer);
      writer.End();
      return;
    case Json::value_t::object:
      writer.BeginDict();
      for (const auto& [key, value] : v.items()) {
        writer.Key(key);
        Stream(value, writer);
      }
      writer.End();
      return;
    default:
      FAIL() << "no such value in a dump";
  }
}

Json Sample() {
  return Json{
      {"empty list", Json::array()},
      {"empty dict", Json::object()},
      {"scalars",
       Json::array(
           {nullptr, true, false, -165558, std::numeric_limits<uint64_t>::max(),
            1e-05, 2.0, std::numeric_limits<double>::quiet_NaN(),
            -std::numeric_limits<double>::infinity(), "m\xc3\xa9\"an\n"})},
      {"nested", Json{{"a", Json::array({Json::array(), Json::object(),
                                         Json{{"b", Json::array({1, 2})}}})}}},
  };
}

TEST(JsonStreamWriterTest, WritesThePythonJsonDumpsBytesAtEveryDepth) {
  JsonStreamWriter writer;  // reused, as the daemon does
  for (int depth : {0, 1, 3, 7}) {
    SCOPED_TRACE(depth);
    std::string expected = "prefix";
    AppendPythonJson(expected, Sample(), depth);
    std::string out = "prefix";
    writer.Reset(&out, depth);
    Stream(Sample(), writer);
    EXPECT_EQ(out, expected);
    EXPECT_EQ(writer.open_count(), 0u);
  }
}

TEST(JsonStreamWriterTest, ScalarsAndEmptyContainersStandAlone) {
  JsonStreamWriter writer;
  std::string out;
  writer.Reset(&out, 3);
  writer.BeginList();
  writer.End();
  EXPECT_EQ(out, "[]");
  out.clear();
  writer.Reset(&out, 3);
  writer.Float(1e16);
  EXPECT_EQ(out, "1e+16");
}

TEST(JsonStreamWriterTest, TokensAreCopiedAsTheyAre) {
  JsonStreamWriter writer;
  std::string out;
  writer.Reset(&out, 0);
  writer.BeginDict();
  writer.KeyToken(R"("k\u00e9")");
  writer.Token("1.50");
  writer.End();
  EXPECT_EQ(out, "{\n \"k\\u00e9\": 1.50\n}");
}

}  // namespace
}  // namespace tprobe::dump
