#include "common/dump/json_reindent.h"

#include <gtest/gtest.h>

#include <limits>

#include "common/dump/json_writer.h"

namespace tprobe::dump {
namespace {

std::string Reindent(std::string_view in, int depth) {
  std::string out = "kept";
  if (!ReindentPythonJson(in, depth, out)) {
    EXPECT_EQ(out, "kept") << "a refused value leaves the buffer as it was";
    return "<refused>";
  }
  return out.substr(4);
}

TEST(JsonReindentTest, CompactAndIndentedTextGiveThePythonLayout) {
  const Json value = {
      {"input_args",
       Json::array({Json::object(), Json::array(), nullptr, true, -12, 0.5,
                    "a \"q\" \\ \n \x01 \xe2\x82\xac"})},
      {"output", Json{{"x", Json::array({1, Json{{"y", false}}})}}},
  };
  for (int depth : {0, 3}) {
    SCOPED_TRACE(depth);
    std::string expected;
    AppendPythonJson(expected, value, depth);
    EXPECT_EQ(Reindent(expected, depth), expected);
    EXPECT_EQ(Reindent(PythonJsonDumps(value), depth), expected);
    // Compact text (nlohmann's, for a value it spells as Python does).
    const Json ascii = {{"a", Json::array({1, Json::object(), "x y"})},
                        {"b", Json{{"c", -0.25}}}};
    std::string ascii_expected;
    AppendPythonJson(ascii_expected, ascii, depth);
    EXPECT_EQ(Reindent(ascii.dump(), depth), ascii_expected);
    // nlohmann writes raw UTF-8, which Python's layout never holds.
    EXPECT_EQ(Reindent(value.dump(), depth), "<refused>");
  }
}

TEST(JsonReindentTest, KeepsPythonsNonFiniteFloatsAndNumberSpellings) {
  EXPECT_EQ(Reindent("[NaN,Infinity,-Infinity,1e-05,-0.0,1E+16,0]", 0),
            "[\n NaN,\n Infinity,\n -Infinity,\n 1e-05,\n -0.0,\n 1E+16,\n "
            "0\n]");
  EXPECT_EQ(Reindent("  7  ", 2), "7");
}

TEST(JsonReindentTest, RefusesAnythingElse) {
  for (std::string_view bad : {
           "",
           "[",
           "[1,]",
           "[1 2]",
           "{\"a\" 1}",
           "{\"a\":}",
           "{1:2}",
           "{\"a\":1,}",
           "[1]]",
           "[1] x",
           "\"unterminated",
           "\"raw \xc3\xa9 byte\"",
           "\"tab\tinside\"",
           "\"\\x41\"",
           "\"\\u00E9\"",
           "\"\\u12\"",
           "01",
           "1.",
           ".5",
           "1e",
           "-",
           "nan",
           "True",
           "[1}",
           "{\"a\":1]",
       }) {
    EXPECT_EQ(Reindent(bad, 0), "<refused>") << bad;
  }
}

}  // namespace
}  // namespace tprobe::dump
