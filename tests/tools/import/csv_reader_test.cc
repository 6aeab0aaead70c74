#include "tools/import/csv_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tprobe::import {
namespace {

using ::testing::ElementsAre;

TEST(CsvReaderTest, SplitsRowsAndFields) {
  Result<std::vector<CsvRow>> rows = ParseCsv("a,b,c\n1,,3\r\nx,y,\n");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_THAT((*rows)[0].fields, ElementsAre("a", "b", "c"));
  EXPECT_THAT((*rows)[1].fields, ElementsAre("1", "", "3"));
  EXPECT_THAT((*rows)[2].fields, ElementsAre("x", "y", ""));
  EXPECT_EQ((*rows)[2].line, 3u);
}

TEST(CsvReaderTest, QuotedFieldsHoldCommasQuotesAndLineBreaks) {
  Result<std::vector<CsvRow>> rows = ParseCsv(
      "\xEF\xBB\xBFShape,Name\n\"(1,4096)\",\"say \"\"hi\"\"\"\n"
      "\"two\nlines\",\"\"\nlast,row");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_THAT((*rows)[0].fields, ElementsAre("Shape", "Name"));
  EXPECT_THAT((*rows)[1].fields, ElementsAre("(1,4096)", "say \"hi\""));
  EXPECT_THAT((*rows)[2].fields, ElementsAre("two\nlines", ""));
  EXPECT_EQ((*rows)[3].line, 5u);
  EXPECT_THAT((*rows)[3].fields, ElementsAre("last", "row"));
}

TEST(CsvReaderTest, SkipsEmptyLines) {
  Result<std::vector<CsvRow>> rows = ParseCsv("a\n\n\nb\n\n");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].line, 4u);
}

TEST(CsvReaderTest, RejectsBrokenQuoting) {
  Result<std::vector<CsvRow>> open = ParseCsv("a,b\n1,\"never ends\n");
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.status().message(), "line 2: quoted field never ends");

  Result<std::vector<CsvRow>> trailing = ParseCsv("\"a\"b,c\n");
  ASSERT_FALSE(trailing.ok());
  EXPECT_EQ(trailing.status().message(), "line 1: text after a quoted field");
}

TEST(CsvReaderTest, ReadFileNamesThePath) {
  Result<std::vector<CsvRow>> rows = ReadCsvFile("/nonexistent/statistic.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message(),
            "/nonexistent/statistic.csv: cannot open: No such file or "
            "directory");
}

}  // namespace
}  // namespace tprobe::import
