#include "daemon/output/assembler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "common/dump/tree_writer.h"
#include "daemon/ingest/drain.h"
#include "daemon/process/logger.h"
#include "tests/daemon/ring_records.h"
#include "tests/daemon/test_rank.h"
#include "tests/support/daemon_process.h"
#include "tests/support/expected_accounting.h"

namespace tprobe::daemon {
namespace {

using testing::List;
using testing::MakeEntry;
using testing::ReadFile;
using testing::TempDir;

class AssemblerTest : public ::testing::Test {
 protected:
  AssemblerOptions Options() const {
    AssemblerOptions o;
    o.task = "statistics";
    o.level = "mix";
    o.dump_path = dir_.path();
    o.write_path = dir_.path();
    o.rank = 3;
    return o;
  }
  std::string File(uint32_t step, const std::string& name) const {
    return dir_.path() + "/step" + std::to_string(step) + "/rank3/" + name;
  }

  TempDir dir_;
};

TEST_F(AssemblerTest, FinishWritesTheFourFilesOfAClosedTree) {
  Assembler a(Options());
  dump::StepTree* tree = a.Tree(0);
  ASSERT_NE(tree, nullptr);
  tree->AddEntry("Functional.relu.0.forward",
                 dump::Json::object({{"output", dump::Json::array()}}));
  tree->SetParent("Functional.relu.0.forward", std::nullopt);
  ASSERT_TRUE(a.Finish(0).ok());

  EXPECT_EQ(ReadFile(File(0, "dump.json")), R"({
 "task": "statistics",
 "level": "mix",
 "framework": "pytorch",
 "dump_data_dir": null,
 "data": {
  "Functional.relu.0.forward": {
   "output": []
  }
 }
})");
  EXPECT_EQ(ReadFile(File(0, "construct.json")), R"({
 "Functional.relu.0.forward": null
})");
  EXPECT_EQ(ReadFile(File(0, "stack.json")), "{}");
  EXPECT_EQ(ReadFile(File(0, "tprobe.json")),
            (testing::ExpectedAccounting{.entries = 1}.Text()));
}

TEST_F(AssemblerTest, WhyEmptyIsWrittenForATreeWithoutEntriesOnly) {
  Assembler a(Options());
  a.Tree(0);
  a.NoteWhyEmpty(0, "scope_list");
  a.Tree(1)->AddEntry("Functional.relu.0.forward", dump::Json::object());
  a.NoteWhyEmpty(1, "no_api");  // the rank was wrong: entries came
  a.NoteWhyEmpty(2, "no_api");  // no tree: none is opened for it
  ASSERT_TRUE(a.Finish(2).ok());
  const std::string empty = ReadFile(File(0, "tprobe.json"));
  EXPECT_NE(empty.find("\"entries\": 0,\n \"why_empty\": \"scope_list\","),
            std::string::npos)
      << empty;
  EXPECT_EQ(dump::Json::parse(empty)["complete"], true);
  EXPECT_EQ(ReadFile(File(1, "tprobe.json")),
            (testing::ExpectedAccounting{.entries = 1}.Text()));
  EXPECT_FALSE(std::filesystem::exists(File(2, "tprobe.json")));
}

TEST_F(AssemblerTest, AnOpenTreeIsNeverWrittenComplete) {
  Assembler a(Options());
  a.Tree(0)->AddEntry("Functional.relu.0.forward", dump::Json::object());
  ASSERT_TRUE(a.WriteDirty().ok());
  const dump::Json open = dump::Json::parse(ReadFile(File(0, "tprobe.json")));
  EXPECT_EQ(open["complete"], false);
  EXPECT_EQ(open["step_open"], true);
  ASSERT_TRUE(a.Finish(0).ok());
  const dump::Json closed = dump::Json::parse(ReadFile(File(0, "tprobe.json")));
  EXPECT_EQ(closed["complete"], true);
  EXPECT_EQ(closed["step_open"], false);
}

TEST_F(AssemblerTest, CleanTreesAreNotRewrittenUntilChanged) {
  Assembler a(Options());
  a.Tree(0);
  ASSERT_TRUE(a.WriteDirty().ok());
  std::filesystem::remove(File(0, "dump.json"));
  ASSERT_TRUE(a.WriteDirty().ok());
  EXPECT_FALSE(std::filesystem::exists(File(0, "dump.json")));
  a.Tree(0);
  ASSERT_TRUE(a.WriteDirty().ok());
  EXPECT_TRUE(std::filesystem::exists(File(0, "dump.json")));
}

TEST_F(AssemblerTest, FinishWritesTheStepsUpToItAndForgetsThem) {
  Assembler a(Options());
  a.Tree(0)->AddEntry("A", dump::Json::object());
  a.Tree(1)->AddEntry("B", dump::Json::object());
  ASSERT_TRUE(a.Finish(0).ok());
  EXPECT_TRUE(std::filesystem::exists(File(0, "dump.json")));
  EXPECT_FALSE(std::filesystem::exists(File(1, "dump.json")));
  EXPECT_EQ(a.open_trees(), 1u);
  EXPECT_EQ(a.Tree(0), nullptr) << "step 0 is finished: its data is late";
  EXPECT_EQ(a.current_step(), 1u);
}

TEST_F(AssemblerTest, RingDropsAreChargedOnceToTheCurrentStep) {
  Assembler a(Options());
  a.NoteStep(2);
  a.AddRingDrops({.ring_full = 3, .too_large = 1});
  a.AddRingDrops({});
  a.AddRingDrops({.ring_full = 2});
  ASSERT_EQ(a.open_trees(), 1u);
  const dump::Accounting& acc = a.Tree(2)->accounting();
  EXPECT_EQ(acc.dropped.ring_full, 5u);
  EXPECT_EQ(acc.dropped.too_large, 1u);
  EXPECT_FALSE(acc.complete());
}

TEST_F(AssemblerTest, AnOutageGoesToTheNextTreeWrittenOnly) {
  Assembler a(Options());
  dump::Outage outage;
  outage.first_step = 3;
  outage.last_step = 5;
  outage.produced = 40;
  outage.dropped.no_daemon = 40;
  a.NoteOutage(outage);
  EXPECT_EQ(a.open_trees(), 0u);
  a.Tree(6);
  a.Tree(7);
  ASSERT_TRUE(a.Finish(7).ok());
  const std::string first = ReadFile(File(6, "tprobe.json"));
  EXPECT_NE(
      first.find("\"daemon_outage\": {\n  \"steps\": [\n   3,\n   5\n  ]"),
      std::string::npos)
      << first;
  EXPECT_NE(first.find("\"complete\": true"), std::string::npos) << first;
  EXPECT_EQ(ReadFile(File(7, "tprobe.json")).find("daemon_outage"),
            std::string::npos);
}

TEST_F(AssemblerTest, ProducerDeathMarksEveryOpenTreeIncomplete) {
  Assembler a(Options());
  a.Tree(0);
  a.Tree(1);
  a.MarkProducerDied();
  ASSERT_TRUE(a.WriteDirty().ok());
  for (uint32_t step : {0u, 1u}) {
    EXPECT_NE(ReadFile(File(step, "tprobe.json")).find("\"complete\": false"),
              std::string::npos);
    EXPECT_NE(
        ReadFile(File(step, "tprobe.json")).find("\"producer_died\": true"),
        std::string::npos);
  }
}

TEST_F(AssemblerTest, TensorTaskNamesTheConfiguredTensorDataDir) {
  AssemblerOptions o = Options();
  o.task = "tensor";
  o.dump_path = "./dump";
  o.tensor_data = true;
  Assembler a(o);
  a.Tree(4);
  ASSERT_TRUE(a.WriteDirty().ok());
  EXPECT_NE(
      ReadFile(File(4, "dump.json"))
          .find(R"("dump_data_dir": "./dump/step4/rank3/dump_tensor_data")"),
      std::string::npos);
  EXPECT_EQ(a.TensorDataDir(4), File(4, "dump_tensor_data"));
}

TEST_F(AssemblerTest, ANewDumpPathTakesTheTreesOpenedAfterIt) {
  namespace fs = std::filesystem;
  Assembler a(Options());
  a.Tree(0);
  AssemblerOptions moved = Options();
  moved.dump_path = moved.write_path = dir_.path() + "/moved";
  a.SetCapture(moved);
  a.Tree(1);
  ASSERT_TRUE(a.Finish(1).ok());
  // Step 0 was open: it stays where it began.
  EXPECT_TRUE(fs::exists(File(0, "dump.json")));
  EXPECT_FALSE(fs::exists(File(1, "dump.json")));
  EXPECT_FALSE(fs::exists(dir_.path() + "/moved/step0"));
  EXPECT_TRUE(fs::exists(dir_.path() + "/moved/step1/rank3/dump.json"));
  EXPECT_TRUE(fs::exists(dir_.path() + "/moved/step1/rank3/tprobe.json"));
}

// A young tree has no journal; once it is kJournalPeriod old its content
// goes into the journal in one go, and later changes follow it there: what
// the journal recovers is the tree as it was, duplicates counted, and a
// parameters_grad placeholder filled in part still takes the rest where
// it is.
TEST_F(AssemblerTest, ATreeJournalledLateRecoversAsItWas) {
  namespace fs = std::filesystem;
  Assembler a(Options());
  dump::StepTree* tree = a.Tree(0);
  const dump::Json body = dump::Json::object({{"output", dump::Json::array()}});
  tree->AddEntry("Module.a.A.forward.0", body);
  tree->AddEntry("Functional.relu.0.forward", body);
  tree->AddEntry("Functional.relu.0.forward", body);  // a duplicate
  const std::string grads = "Module.b.B.parameters_grad.0";
  tree->AddEntry(grads, dump::EntryText());
  tree->AddEntry("Module.b.B.backward.0", body);
  tree->AddEntry(grads, dump::Json::object({{"weight", 1}}));
  tree->SetParent("Module.a.A.forward.0", std::nullopt);
  tree->SetParent("Functional.relu.0.forward", "Module.a.A.forward.0");
  tree->AddStack("Module.a.A.forward.0", {"File a.py, line 1"});
  tree->AddStack("Functional.relu.0.forward", {"File a.py, line 1"});
  EXPECT_EQ(a.JournalOf(0), nullptr);
  ASSERT_TRUE(a.SyncJournals().ok());
  EXPECT_EQ(a.JournalOf(0), nullptr);  // still young: nothing to disk

  std::this_thread::sleep_for(dump::kJournalPeriod);
  ASSERT_TRUE(a.SyncJournals().ok());
  EXPECT_TRUE(fs::exists(File(0, dump::kJournalFileName)));
  dump::Journal* journal = a.JournalOf(0);
  ASSERT_NE(journal, nullptr);
  const dump::Json later = dump::Json::object({{"input", dump::Json::array()}});
  journal->Entry("Module.a.A.forward.0", dump::EntryText::FromJson(later));
  tree->AddEntry("Module.a.A.forward.0", later);
  journal->Stack("Functional.gelu.0.forward", {"File b.py, line 2"});
  tree->AddStack("Functional.gelu.0.forward", {"File b.py, line 2"});
  const dump::Json bias = dump::Json::object({{"bias", 2}});
  journal->Entry(grads, dump::EntryText::FromJson(bias));
  tree->AddEntry(grads, bias);
  ASSERT_EQ(tree->entries()[1].name, grads) << "filled where it was";
  std::this_thread::sleep_for(dump::kJournalPeriod);
  ASSERT_TRUE(a.SyncJournals().ok());

  const std::string live = dir_.path() + "/live";
  ASSERT_TRUE(dump::WriteStepTree(live, *tree).ok());
  const std::string dir = dir_.path() + "/step0/rank3";
  ASSERT_EQ(dump::RecoverStep(dir).value(), true);
  for (const char* name : {"dump.json", "stack.json", "construct.json"}) {
    EXPECT_EQ(ReadFile(dir + "/" + name), ReadFile(live + "/" + name)) << name;
  }
  const dump::Json accounting =
      dump::Json::parse(ReadFile(dir + "/tprobe.json"));
  EXPECT_EQ(accounting["entries"], 4);
  EXPECT_EQ(accounting["duplicates_dropped"], 1);
  EXPECT_EQ(accounting["recovered"], true);
}

// The assembly of one producer's records: construct nesting and dedup.
class AssemblyTest : public ::testing::Test {
 protected:
  void Drain(testing::TestRank& p) {
    auto state = p->Lock();
    DrainSome(*p, *state, 0, *log_);
    ASSERT_FALSE(state->broken) << state->last_error;
    ASSERT_TRUE(state->assembler.Finish(UINT32_MAX).ok());
  }
  std::string File(const std::string& name) const {
    return dir_.path() + "/step0/rank0/" + name;
  }

  TempDir dir_;
  Logger log_ = MakeLogger(spdlog::level::warn);
};

// msprobe's key order: a module's node goes in after the next API node
// (section 4 of the reference: "The API key is inserted first, then the
// pending module_node entries are merged").
TEST_F(AssemblyTest, ConstructParentsFollowModuleNestingOnOneRing) {
  testing::TestRank p(testing::MakeRegister(testing::ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  using record::CallKind;
  const char* names[] = {"",
                         "Module.a.A.forward.0",
                         "Module.a.b.B.forward.0",
                         "Functional.relu.0.forward",
                         "Tensor.add.0.forward",
                         "Module.c.C.forward.0"};
  for (uint32_t id = 1; id <= 5; ++id) {
    ASSERT_TRUE(w.Intern(id, record::InternKind::kName, names[id]));
  }
  uint64_t seq = 1;
  ASSERT_TRUE(w.Call(true, seq++, 0, 1, CallKind::kModule));
  ASSERT_TRUE(w.Call(true, seq++, 0, 2, CallKind::kModule));
  ASSERT_TRUE(w.Call(true, seq++, 0, 3, CallKind::kApi));
  ASSERT_TRUE(w.Call(false, seq++, 0, 3, CallKind::kApi));
  ASSERT_TRUE(w.Call(false, seq++, 0, 2, CallKind::kModule));
  ASSERT_TRUE(w.Call(true, seq++, 0, 4, CallKind::kApi));
  ASSERT_TRUE(w.Call(false, seq++, 0, 4, CallKind::kApi));
  ASSERT_TRUE(w.Call(false, seq++, 0, 1, CallKind::kModule));
  ASSERT_TRUE(w.Call(true, seq++, 0, 5, CallKind::kModule));
  ASSERT_TRUE(w.Call(false, seq++, 0, 5, CallKind::kModule));
  Drain(p);
  EXPECT_EQ(ReadFile(File("construct.json")), R"({
 "Functional.relu.0.forward": "Module.a.b.B.forward.0",
 "Module.a.A.forward.0": null,
 "Module.a.b.B.forward.0": "Module.a.A.forward.0",
 "Tensor.add.0.forward": "Module.a.A.forward.0",
 "Module.c.C.forward.0": null
})");
}

// The start of msprobe 8.3.3's mix construct.json for the tiny GPT
// (tests/data/golden/mix): a Block opens, its ln1 opens, and both go in
// right after the first API node inside them.
TEST_F(AssemblyTest, HeldModuleNodesFollowTheNextApiNodeInCallBeginOrder) {
  testing::TestRank p(testing::MakeRegister(testing::ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  using record::CallKind;
  const char* names[] = {"",
                         "Module.tok.Embedding.forward.0",
                         "Functional.embedding.0.forward",
                         "Tensor.__add__.0.forward",
                         "Module.blocks.0.Block.forward.0",
                         "Module.blocks.0.ln1.LayerNorm.forward.0",
                         "Functional.layer_norm.0.forward"};
  for (uint32_t id = 1; id <= 6; ++id) {
    ASSERT_TRUE(w.Intern(id, record::InternKind::kName, names[id]));
  }
  const testing::Entry data = MakeEntry({{"output", List({})}});
  uint64_t seq = 1;
  // tok: module, its API, the module's data, end.
  ASSERT_TRUE(w.Call(true, seq++, 0, 1, CallKind::kModule));
  ASSERT_TRUE(w.Call(true, seq++, 0, 2, CallKind::kApi));
  ASSERT_TRUE(w.Entry(seq++, 0, 2, 0, data));
  ASSERT_TRUE(w.Call(false, seq++, 0, 2, CallKind::kApi));
  ASSERT_TRUE(w.Entry(seq++, 0, 1, 0, data));
  ASSERT_TRUE(w.Call(false, seq++, 0, 1, CallKind::kModule));
  // An API outside every module.
  ASSERT_TRUE(w.Call(true, seq++, 0, 3, CallKind::kApi));
  ASSERT_TRUE(w.Call(false, seq++, 0, 3, CallKind::kApi));
  // Block > ln1 > layer_norm.
  ASSERT_TRUE(w.Call(true, seq++, 0, 4, CallKind::kModule));
  ASSERT_TRUE(w.Call(true, seq++, 0, 5, CallKind::kModule));
  ASSERT_TRUE(w.Call(true, seq++, 0, 6, CallKind::kApi));
  ASSERT_TRUE(w.Call(false, seq++, 0, 6, CallKind::kApi));
  ASSERT_TRUE(w.Call(false, seq++, 0, 5, CallKind::kModule));
  ASSERT_TRUE(w.Call(false, seq++, 0, 4, CallKind::kModule));
  Drain(p);
  EXPECT_EQ(ReadFile(File("construct.json")), R"({
 "Functional.embedding.0.forward": "Module.tok.Embedding.forward.0",
 "Module.tok.Embedding.forward.0": null,
 "Tensor.__add__.0.forward": null,
 "Functional.layer_norm.0.forward": "Module.blocks.0.ln1.LayerNorm.forward.0",
 "Module.blocks.0.Block.forward.0": null,
 "Module.blocks.0.ln1.LayerNorm.forward.0": "Module.blocks.0.Block.forward.0"
})");
}

// Without API nodes (level L0) the nodes keep their CallBegin order: held
// nodes go in at the ring's next Entry or CallEnd.
TEST_F(AssemblyTest, WithoutApiNodesModuleNodesKeepTheirCallBeginOrder) {
  testing::TestRank p(testing::MakeRegister(
      testing::ConfigJson(dir_.path(), "statistics", "L0")));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  using record::CallKind;
  const char* names[] = {"", "Module.a.A.forward.0", "Module.a.b.B.forward.0",
                         "Module.c.C.forward.0", "Module.d.D.backward.0"};
  for (uint32_t id = 1; id <= 4; ++id) {
    ASSERT_TRUE(w.Intern(id, record::InternKind::kName, names[id]));
  }
  const testing::Entry data = MakeEntry({{"output", List({})}});
  uint64_t seq = 1;
  ASSERT_TRUE(w.Call(true, seq++, 0, 1, CallKind::kModule));
  ASSERT_TRUE(w.Call(true, seq++, 0, 2, CallKind::kModule));
  ASSERT_TRUE(w.Entry(seq++, 0, 2, 0, data));  // releases A, then B
  ASSERT_TRUE(w.Call(false, seq++, 0, 2, CallKind::kModule));
  ASSERT_TRUE(w.Call(true, seq++, 0, 3, CallKind::kModule));
  ASSERT_TRUE(w.Call(false, seq++, 0, 3, CallKind::kModule));  // releases C
  ASSERT_TRUE(w.Call(false, seq++, 0, 1, CallKind::kModule));
  ASSERT_TRUE(w.Call(true, seq++, 0, 4, CallKind::kModule,
                     record::Direction::kBackward));
  ASSERT_TRUE(w.Entry(seq++, 0, 4, 0, data));
  ASSERT_TRUE(w.Call(false, seq++, 0, 4, CallKind::kModule,
                     record::Direction::kBackward));
  Drain(p);
  EXPECT_EQ(ReadFile(File("construct.json")), R"({
 "Module.a.A.forward.0": null,
 "Module.a.b.B.forward.0": "Module.a.A.forward.0",
 "Module.c.C.forward.0": "Module.a.A.forward.0",
 "Module.d.D.backward.0": null
})");
}

// Nodes still held when the step ends (a module entered just before step())
// are not lost.
TEST_F(AssemblyTest, HeldNodesAreSettledBeforeTheStepIsFinished) {
  testing::TestRank p(testing::MakeRegister(testing::ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, "Module.a.A.forward.0"));
  ASSERT_TRUE(w.Call(true, 1, 0, 1, record::CallKind::kModule));
  auto state = p->Lock();
  state->assembler.Tree(0);  // opened by Start
  DrainCommitted(*p, *state, *log_);
  ASSERT_TRUE(state->assembler.WriteDirty().ok());
  EXPECT_EQ(ReadFile(File("construct.json")), "{}") << "still held";
  ReleaseHeldNodes(*p, *state, *log_);
  ASSERT_TRUE(state->assembler.Finish(0).ok());
  EXPECT_EQ(ReadFile(File("construct.json")), R"({
 "Module.a.A.forward.0": null
})");
}

TEST_F(AssemblyTest, LevelL1GetsNoConstructNodes) {
  testing::TestRank p(testing::MakeRegister(
      testing::ConfigJson(dir_.path(), "statistics", "L1")));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(
      w.Intern(1, record::InternKind::kName, "Functional.relu.0.forward"));
  ASSERT_TRUE(w.Call(true, 1, 0, 1, record::CallKind::kApi));
  ASSERT_TRUE(w.Entry(2, 0, 1, 0, MakeEntry({{"output", List({})}})));
  ASSERT_TRUE(w.Call(false, 3, 0, 1, record::CallKind::kApi));
  Drain(p);
  EXPECT_EQ(ReadFile(File("construct.json")), "{}");
  EXPECT_NE(ReadFile(File("dump.json")).find("Functional.relu.0.forward"),
            std::string::npos);
}

TEST_F(AssemblyTest, IdenticalReDumpIsDroppedOnceWithItsStack) {
  testing::TestRank p(testing::MakeRegister(testing::ConfigJson(dir_.path())));
  ASSERT_TRUE(p);
  auto w = p.Writer(0);
  ASSERT_TRUE(
      w.Intern(1, record::InternKind::kName, "Primitive.add.0.forward"));
  ASSERT_TRUE(w.Intern(2, record::InternKind::kStack, "File a.py, line 1"));
  const testing::Entry e = MakeEntry({{"output", List({testing::Int(1)})}});
  ASSERT_TRUE(w.Entry(1, 0, 1, 2, e));
  ASSERT_TRUE(w.Entry(2, 0, 1, 2, e));  // graph-mode TensorDump fires twice
  Drain(p);
  EXPECT_EQ(ReadFile(File("dump.json")), R"({
 "task": "statistics",
 "level": "mix",
 "framework": "pytorch",
 "dump_data_dir": null,
 "data": {
  "Primitive.add.0.forward": {
   "output": [
    1
   ]
  }
 }
})");
  EXPECT_EQ(ReadFile(File("stack.json")), R"({
 "0": [
  [
   "Primitive.add.0.forward"
  ],
  [
   "File a.py, line 1"
  ]
 ]
})");
  const std::string accounting = ReadFile(File("tprobe.json"));
  EXPECT_NE(accounting.find("\"entries\": 1,"), std::string::npos);
  EXPECT_NE(accounting.find("\"duplicates_dropped\": 1,"), std::string::npos);
  EXPECT_NE(accounting.find("\"complete\": true"), std::string::npos);
}

}  // namespace
}  // namespace tprobe::daemon
