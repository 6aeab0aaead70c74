#include "common/dump/entry_text.h"

#include <gtest/gtest.h>

namespace tprobe::dump {
namespace {

std::string InDump(const EntryText& entry) {
  std::string out;
  entry.AppendTo(out);
  return out;
}

TEST(EntryTextTest, FromJsonWritesTheMembersAsDumpJsonHoldsThem) {
  const Json body = {{"input_args", Json::array({1, Json::object()})},
                     {"output", nullptr}};
  const EntryText entry = EntryText::FromJson(body);
  ASSERT_EQ(entry.size(), 2u);
  EXPECT_EQ(entry.key(0), "input_args");
  EXPECT_EQ(entry.value(0), "[\n    1,\n    {}\n   ]");
  // As PythonJsonDumps writes the body two levels deep.
  std::string expected;
  AppendPythonJson(expected, body, 2);
  EXPECT_EQ(InDump(entry), expected);
  EXPECT_EQ(InDump(EntryText()), "{}");
}

TEST(EntryTextTest, AKeyGivenTwiceTakesTheNewValueInItsPlace) {
  EntryText entry;
  entry.Set("a", "1");
  entry.Set("b", "2");
  entry.Set("a", "3");
  ASSERT_EQ(entry.size(), 2u);
  EXPECT_EQ(entry.key(0), "a");
  EXPECT_EQ(entry.value(0), "3");
  EXPECT_EQ(entry.value(1), "2");
}

TEST(EntryTextTest, EqualMeansSameMembersSameBytesSameOrder) {
  EntryText a;
  a.Set("x", "1");
  a.Set("y", "2");
  EntryText b;
  b.Set("y", "2");
  b.Set("x", "1");
  EXPECT_FALSE(a == b);
  EntryText c;
  c.Set("x", "0");
  c.Set("x", "1");  // an unused old value does not count
  c.Set("y", "2");
  EXPECT_TRUE(a == c);
  a.Clear();
  EXPECT_TRUE(a.empty());
  EXPECT_TRUE(a == EntryText());
}

}  // namespace
}  // namespace tprobe::dump
