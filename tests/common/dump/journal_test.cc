// The journal format (common/dump/journal.h): written, cut short, read back.

#include "common/dump/journal.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "common/stats/crc32.h"

namespace tprobe::dump {
namespace {

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tp-journal-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Read(const std::string& name) const {
    std::ifstream in(dir_ + "/" + name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Writes what `journal` buffered, as if kJournalPeriod had passed.
  static void Flush(Journal& journal, const Accounting& accounting) {
    ASSERT_TRUE(journal
                    .Sync(accounting, std::chrono::steady_clock::now() +
                                          std::chrono::seconds(1))
                    .ok());
  }

  // Appends one record in the journal's framing to `out`.
  static void Record(std::string& out, uint8_t kind, const Json& cbor_body) {
    std::vector<uint8_t> body{kind};
    Json::to_cbor(cbor_body, body);
    const uint32_t size = static_cast<uint32_t>(body.size());
    const uint32_t crc = stats::Crc32(std::as_bytes(std::span(body)));
    for (uint32_t v : {size, crc}) {
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> 8 * i));
    }
    out.append(body.begin(), body.end());
  }

  void WriteJournal(const std::string& bytes) const {
    std::ofstream(dir_ + "/" + kJournalFileName, std::ios::binary) << bytes;
  }

  std::string dir_;
};

TEST_F(JournalTest, RecoveryRebuildsTheSameDumpJsonStackAndConstruct) {
  StepTree live("statistics", "mix", "pytorch");
  Journal journal(dir_, "statistics", "mix", "pytorch", std::nullopt);
  const std::string module = "Module.fc.Linear.forward.0";
  const std::pair<std::string, Json> entries[] = {
      {module, {{"input_args", Json::array({1})}}},
      {"Functional.linear.0.forward",
       {{"input_args",
         Json::array({std::numeric_limits<double>::quiet_NaN(),
                      -std::numeric_limits<double>::infinity(), 1e-05,
                      "caf\xc3\xa9 \"q\"\n", Json::object(), Json::array()})},
        {"output", Json{{"type", "torch.Tensor"}, {"Max", 4.0}}}}},
      // A module's outputs come in a second part; a re-dump is dropped.
      {module, {{"output", Json::array({2})}}},
      {"Empty", Json::object()},
      {"Empty", Json::object()},
  };
  for (const auto& [name, body] : entries) {
    const EntryText text = EntryText::FromJson(body);
    journal.Entry(name, text);
    live.AddEntry(name, text);
  }
  journal.Parent(module, std::nullopt);
  live.SetParent(module, std::nullopt);
  journal.Stack(module, {"File a.py, line 1"});
  live.AddStack(module, {"File a.py, line 1"});
  Flush(journal, live.accounting());

  Result<bool> recovered = RecoverStep(dir_);
  ASSERT_TRUE(recovered.ok()) << recovered.status().message();
  EXPECT_TRUE(recovered.value());
  EXPECT_EQ(Read("dump.json"), live.DumpJson());
  EXPECT_EQ(Read("stack.json"), live.StackJson());
  EXPECT_EQ(Read("construct.json"), live.ConstructJson());
  const Json accounting = Json::parse(Read("tprobe.json"));
  EXPECT_EQ(accounting["entries"], 3);
  EXPECT_EQ(accounting["duplicates_dropped"], 1);
  EXPECT_EQ(accounting["recovered"], true);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/" + kJournalFileName));
}

// A parameters_grad placeholder (an empty entry: StepTree::AddEntry) is
// journalled and recovered as one: filled where it is, or left out.
TEST_F(JournalTest, PlaceholdersAreRecoveredAsPlaceholders) {
  StepTree live("statistics", "L0", "pytorch");
  Journal journal(dir_, "statistics", "L0", "pytorch", std::nullopt);
  const std::string fc = "Module.fc.Linear.parameters_grad.0";
  const std::string ln = "Module.ln.LayerNorm.parameters_grad.0";
  const std::pair<std::string, Json> entries[] = {
      {fc, Json::object()}, {"Module.fc.Linear.backward.0", {{"input", 1}}},
      {ln, Json::object()}, {fc, {{"weight", 2}}},
      {fc, {{"bias", 3}}},
  };
  for (const auto& [name, body] : entries) {
    const EntryText text = EntryText::FromJson(body);
    journal.Entry(name, text);
    live.AddEntry(name, text);
  }
  Flush(journal, live.accounting());

  Result<bool> recovered = RecoverStep(dir_);
  ASSERT_TRUE(recovered.ok()) << recovered.status().message();
  const std::string dump = Read("dump.json");
  EXPECT_EQ(dump, live.DumpJson());
  EXPECT_LT(dump.find(fc), dump.find("Module.fc.Linear.backward.0"));
  EXPECT_EQ(dump.find(ln), std::string::npos);
  EXPECT_EQ(Json::parse(Read("tprobe.json"))["entries"], 2);
}

TEST_F(JournalTest, AnEntryThatIsNotJsonEndsWhatIsRecovered) {
  StepTree live("statistics", "mix", "pytorch");
  Journal journal(dir_, "statistics", "mix", "pytorch", std::nullopt);
  EntryText good;
  good.Set("output", "[\n    1\n   ]");
  EntryText bad;  // its crc is right: the bytes are checked themselves
  bad.Set("output", "[1,\n \"x\": }");
  journal.Entry("A", good);
  journal.Entry("B", bad);
  journal.Entry("C", good);
  live.AddEntry("A", good);
  Flush(journal, live.accounting());
  ASSERT_TRUE(RecoverStep(dir_).ok());
  EXPECT_EQ(Read("dump.json"), live.DumpJson());
}

TEST_F(JournalTest, AFormatOneJournalIsStillRead) {
  std::string bytes;
  Record(bytes, 1, Json::array({"statistics", "L1", "pytorch", nullptr}));
  const Json body = {{"output", Json::array({1.5, "x"})}};
  Record(bytes, 2, Json::array({"Functional.relu.0.forward", body}));
  WriteJournal(bytes);
  ASSERT_TRUE(RecoverStep(dir_).ok());
  StepTree expected("statistics", "L1", "pytorch");
  expected.AddEntry("Functional.relu.0.forward", body);
  EXPECT_EQ(Read("dump.json"), expected.DumpJson());
}

TEST_F(JournalTest, AJournalOfAnUnknownFormatIsLeftInPlace) {
  std::string bytes;
  Record(bytes, 1, Json::array({"statistics", "L1", "pytorch", nullptr, 3}));
  WriteJournal(bytes);
  Result<bool> recovered = RecoverStep(dir_);
  ASSERT_FALSE(recovered.ok());
  EXPECT_NE(recovered.status().message().find("no readable header"),
            std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/" + kJournalFileName));
}

}  // namespace
}  // namespace tprobe::dump
