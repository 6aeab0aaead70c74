// End-to-end tests of `tprobe import`: each test writes a MindSpore-style
// raw dump into a temporary directory, runs the real tprobe binary on it and
// checks what a user would see: the tree's files byte for byte against
// tests/data/import/, the messages, the exit status, and that the source
// is left exactly as it was.
//
// Set TPROBE_UPDATE_GOLDEN=1 to rewrite the expected files from the output
// (then review the diff).

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/dump/json_writer.h"
#include "common/dump/npy.h"
#include "common/stats/half.h"
#include "tests/support/python_script.h"

namespace tprobe::import {
namespace {

namespace fs = std::filesystem;
using dump::Json;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// Running the binary.

struct RunResult {
  int code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// Runs `tprobe args...` in `cwd`, capturing stdout and stderr.
RunResult RunTprobe(const fs::path& cwd, const std::vector<std::string>& args) {
  const fs::path out_path = cwd / ".stdout";
  const fs::path err_path = cwd / ".stderr";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) ::_exit(127);
    const int out =
        ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err =
        ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(TPROBE_BIN));
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(TPROBE_BIN, argv.data());
    ::_exit(127);
  }
  RunResult result;
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  fs::remove(out_path);
  fs::remove(err_path);
  return result;
}

// Runs `tprobe args...` in `cwd` on a pseudo-terminal and returns what it
// printed there.
std::string RunTprobeOnTerminal(const fs::path& cwd,
                                const std::vector<std::string>& args) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) ::_exit(127);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(TPROBE_BIN));
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(TPROBE_BIN, argv.data());
    ::_exit(127);
  }
  std::string text;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(master, buf, sizeof(buf));
    if (n <= 0) break;  // EIO once the child has exited
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  return text;
}

// ---------------------------------------------------------------------------
// Trees on disk.

// Every entry under `dir`, by relative path: "dir" for a directory, else
// the mode, modification time and contents of the file.
std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> snap;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(entry.path(), dir).string();
    if (entry.is_directory()) {
      snap[rel] = "dir";
      continue;
    }
    const auto mtime = entry.last_write_time().time_since_epoch().count();
    std::ostringstream s;
    s << std::oct << static_cast<int>(entry.status().permissions()) << " "
      << std::dec << mtime << " " << ReadFile(entry.path());
    snap[rel] = s.str();
  }
  return snap;
}

// The files under `dir` in sorted order, one relative path a line.
std::string Listing(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      files.push_back(fs::relative(entry.path(), dir).string());
    }
  }
  std::sort(files.begin(), files.end());
  std::string text;
  for (const std::string& f : files) text += f + "\n";
  return text;
}

bool UpdateGolden() { return std::getenv("TPROBE_UPDATE_GOLDEN") != nullptr; }

// Checks the tree under `out` against tests/data/import/`golden`/: the file
// listing against files.txt, and every dump.json, stack.json and
// construct.json byte for byte.
void ExpectTreeMatchesGolden(const fs::path& out, const std::string& golden) {
  const fs::path expected =
      fs::path(TPROBE_SOURCE_DIR) / "tests/data/import" / golden;
  const std::string listing = Listing(out);
  if (UpdateGolden()) {
    fs::remove_all(expected);
    WriteFile(expected / "files.txt", listing);
  }
  EXPECT_EQ(listing, ReadFile(expected / "files.txt")) << golden;
  for (const auto& entry : fs::recursive_directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    if (name != "dump.json" && name != "stack.json" &&
        name != "construct.json") {
      continue;
    }
    const fs::path rel = fs::relative(entry.path(), out);
    if (UpdateGolden()) WriteFile(expected / rel, ReadFile(entry.path()));
    EXPECT_EQ(ReadFile(entry.path()), ReadFile(expected / rel))
        << "differs from " << (expected / rel);
  }
}

// ---------------------------------------------------------------------------
// MindSpore-style raw dumps.

// Writes a .npy file of `values` as `dtype` (bfloat16 is stored as float32,
// as TensorDump does).
void WriteTensor(const fs::path& path, DType dtype,
                 const std::vector<int64_t>& shape,
                 const std::vector<double>& values) {
  std::vector<std::byte> bytes;
  auto append = [&bytes](const auto& v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(v));
  };
  for (double v : values) {
    switch (dtype) {
      case DType::kFloat32:
        append(static_cast<float>(v));
        break;
      case DType::kFloat16:
        append(stats::DoubleToHalf(v));
        break;
      case DType::kInt64:
        append(static_cast<int64_t>(v));
        break;
      default:
        FAIL() << "unsupported test dtype";
    }
  }
  fs::create_directories(path.parent_path());
  ASSERT_TRUE(dump::WriteNpy(path.string(), dtype, shape, bytes).ok());
}

std::vector<double> Scaled(std::vector<double> values, double scale) {
  for (double& v : values) v *= scale;
  return values;
}

struct TensorFile {
  std::string stem;        // "Cell.….forward.input.0"
  std::string name_dtype;  // as in the name: "float32", "in_bfloat16"
  DType dtype;             // what the .npy holds
  std::vector<int64_t> shape;
  std::vector<double> values;
};

// The cell dump of one step of one rank of a small model:
//   model (Model) > embed (Embedding), layers.0 (Block) > attn, act (GELU,
//   called twice), layers.1 (Block)
// with forward and backward files, a bfloat16 "_in_" dump, a float16 and an
// int64 tensor, a 0-d loss, and a second dump of layers.1's input with the
// same data. Values scale with the step and rank. Returns the file names.
std::vector<std::string> WriteTensorStep(const fs::path& src, int step,
                                         int rank) {
  const double s = 1 + step + 2 * rank;
  const std::vector<double> ramp = {0, 1, 2, 3, 4, 5};
  const std::vector<double> centred = {-3, -2, -1, 0, 1, 2};
  const std::vector<TensorFile> files = {
      {"Cell.model.Model.forward.input.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(ramp, s)},
      {"Cell.model.embed.Embedding.forward.input.0",
       "int64",
       DType::kInt64,
       {2, 3},
       Scaled(ramp, 1 + step)},
      {"Cell.model.embed.Embedding.forward.output.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(ramp, 0.5 * s)},
      {"Cell.model.layers.0.Block.forward.input.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(centred, s)},
      {"Cell.model.layers.0.attn.Attention.forward.input.0",
       "in_bfloat16",
       DType::kFloat32,
       {2, 3},
       Scaled(centred, 0.25 * s)},
      {"Cell.model.layers.0.attn.Attention.forward.output.0",
       "bfloat16",
       DType::kFloat32,
       {2, 3},
       Scaled(ramp, 0.125 * s)},
      {"Cell.model.layers.0.act.GELU.forward.input.0",
       "float32",
       DType::kFloat32,
       {4},
       Scaled({-1, 0, 1, 2}, s)},
      {"Cell.model.layers.0.act.GELU.forward.output.0",
       "float32",
       DType::kFloat32,
       {4},
       Scaled({0, 0, 1, 2}, s)},
      {"Cell.model.layers.0.act.GELU.forward.input.0",
       "float32",
       DType::kFloat32,
       {4},
       Scaled({-2, -1, 3, 4}, s)},
      {"Cell.model.layers.0.act.GELU.forward.output.0",
       "float32",
       DType::kFloat32,
       {4},
       Scaled({0, 0, 3, 4}, s)},
      {"Cell.model.layers.0.Block.forward.output.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(ramp, 2 * s)},
      {"Cell.model.layers.0.Block.forward.output.1",
       "float16",
       DType::kFloat16,
       {3},
       Scaled({0.5, 1.5, -2.5}, s)},
      {"Cell.model.layers.1.Block.forward.input.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(ramp, 3 * s)},
      {"Cell.model.layers.1.Block.forward.input.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(ramp, 3 * s)},  // dumped again: a duplicate
      {"Cell.model.layers.1.Block.forward.output.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(centred, 4 * s)},
      {"Cell.model.Model.forward.output.0",
       "float32",
       DType::kFloat32,
       {},
       {1.25 * s}},
      {"Cell.model.Model.backward.input.0",
       "float32",
       DType::kFloat32,
       {},
       {1}},
      {"Cell.model.layers.1.Block.backward.input.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(centred, 0.5)},
      {"Cell.model.layers.1.Block.backward.output.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(centred, 0.25)},
      {"Cell.model.layers.0.Block.backward.input.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(centred, 0.25)},
      {"Cell.model.layers.0.Block.backward.output.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(ramp, -0.125)},
      {"Cell.model.Model.backward.output.0",
       "float32",
       DType::kFloat32,
       {2, 3},
       Scaled(ramp, -0.0625)},
  };
  const fs::path dir = src / ("step" + std::to_string(step)) /
                       ("rank" + std::to_string(rank)) / "dump_tensor_data";
  std::vector<std::string> names;
  // Ids grow by 7 from 3, so their decimal strings do not sort in order.
  uint64_t id = 3;
  for (const TensorFile& f : files) {
    const std::string name =
        f.stem + "_" + f.name_dtype + "_" + std::to_string(id) + ".npy";
    WriteTensor(dir / name, f.dtype, f.shape, f.values);
    names.push_back(name);
    id += 7;
  }
  return names;
}

// A statistic.csv row: the TensorDump's slot-0 row (its file name, which
// the import drops) and its slot-1 row with the tensor's statistics.
struct StatRow {
  uint64_t time;
  std::string cell_tensor;  // "Cell.model.Model.forward.input.0"
  std::string dtype;
  std::string shape;
  std::string max, min, avg, l2;
};

std::string CsvRows(const StatRow& r, int op) {
  std::string hyphenated = r.cell_tensor;
  std::replace(hyphenated.begin(), hyphenated.end(), '.', '-');
  const std::string name =
      "Default/network-Net/TensorDump-op" + std::to_string(op) +
      "_dump_tensor_data_" + hyphenated +
      (op % 2 == 1 ? "|Default/TensorDump-op" + std::to_string(op) : "");
  const std::string t = std::to_string(r.time);
  return "TensorDump," + name + ",1," + std::to_string(op) + "," + t +
         ",input,0,64,string,\"()\",,,,,\n" +  //
         "TensorDump," + name + ",1," + std::to_string(op) + "," + t +
         ",input,1,24," + r.dtype + ",\"" + r.shape + "\"," + r.max + "," +
         r.min + "," + r.avg + "," + r.l2 + ",\n";
}

constexpr char kCsvHeader[] =
    "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data "
    "Type,Shape,Max Value,Min Value,Avg Value,L2Norm Value\n";

// The statistics dump of one step of one rank: graph 0's rows in
// rank_{R}/Net/0/{step}/statistic.csv, and, for step 0, graph 1's in
// rank_{R}/Net/1/0/statistic.csv, interleaved in time and written out of
// order. Timestamps are nanoseconds past 1.7e18, beyond a double's
// precision.
void WriteStatisticsStep(const fs::path& src, int step, int rank) {
  const uint64_t t0 = 1700000000000000000ull + 1000000ull * step;
  const std::string k = std::to_string(1 + step + 2 * rank);
  std::vector<StatRow> graph0 = {
      {t0 + 1, "Cell.model.Model.forward.input.0", "float32", "(2,4096)", k,
       "-" + k, "0.5", "1024.5"},
      {t0 + 2, "Cell.model.layers.0.Block.forward.input.0", "float32",
       "(2,4096)", "3.5", "-2.25", "1e-05", "7.441285561071709e-05"},
      {t0 + 3, "Cell.model.layers.0.act.GELU.forward.input.0", "bfloat16",
       "(2,4096)", "4", "-4", "0", "12"},
      {t0 + 4, "Cell.model.layers.0.act.GELU.forward.output.0", "bfloat16",
       "(2,4096)", "4", "0", "1.5", "9"},
      {t0 + 5, "Cell.model.layers.0.act.GELU.forward.input.0", "bfloat16",
       "(2,4096)", "8", "-8", k, "24"},
      {t0 + 6, "Cell.model.layers.0.act.GELU.forward.output.0", "bfloat16",
       "(2,4096)", "8", "0", "3", "18"},
      {t0 + 7, "Cell.model.layers.0.Block.forward.output.0", "float32",
       "(2,4096)", "inf", "-inf", "", "null"},
      {t0 + 20, "Cell.model.Model.forward.output.0", "float32", "()", k, k, k,
       k},
      {t0 + 21, "Cell.model.Model.backward.input.0", "float32", "()", "1", "1",
       "1", "1"},
      {t0 + 22, "Cell.model.layers.1.Block.backward.input.0", "weird",
       "(2,4096)", "0.25", "-0.25", "0", "null"},
      {t0 + 23, "Cell.model.layers.0.Block.backward.output.0", "float16",
       "(2,4096)", "2", "-2", "0", "64"},
  };
  std::vector<StatRow> graph1 = {
      {t0 + 8, "Cell.model.layers.0.mask.Mask.forward.input.0", "bool", "(4)",
       "true", "false", "", ""},
      {t0 + 9, "Cell.model.layers.1.Block.forward.input.0", "float32",
       "(2,4096)", "6", "-6", "0", "96"},
      {t0 + 10, "Cell.model.layers.1.Block.forward.input.0", "float32",
       "(2,4096)", "6", "-6", "0", "96"},  // dumped again: a duplicate
      {t0 + 11, "Cell.model.layers.1.Block.forward.output.0", "int64",
       "(2,4096)", "10", "0", "5", "320"},
  };
  if (step != 0) {  // later steps: one graph only
    graph0.insert(graph0.end(), graph1.begin(), graph1.end());
    graph1.clear();
  }
  auto write = [&src, rank](int graph, int step_dir,
                            std::vector<StatRow> rows) {
    // Out of order: pairs swapped.
    for (size_t i = 0; i + 1 < rows.size(); i += 2) {
      std::swap(rows[i], rows[i + 1]);
    }
    std::string text = kCsvHeader;
    int op = 1;
    for (const StatRow& row : rows) text += CsvRows(row, op++);
    WriteFile(src / ("rank_" + std::to_string(rank)) / "Net" /
                  std::to_string(graph) / std::to_string(step_dir) /
                  "statistic.csv",
              text);
  };
  write(0, step, graph0);
  if (!graph1.empty()) write(1, step, graph1);
}

class ImportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ =
        fs::path(::testing::TempDir()) /
        ("import_cli_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "src");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path src() const { return root_ / "src"; }
  fs::path out() const { return root_ / "out"; }

  // Writes the tensor dump of steps 0 and 1 for ranks 0 and 1.
  void WriteTensorDump() {
    for (int step = 0; step < 2; ++step) {
      for (int rank = 0; rank < 2; ++rank) WriteTensorStep(src(), step, rank);
    }
  }
  void WriteStatisticsDump() {
    for (int step = 0; step < 2; ++step) {
      for (int rank = 0; rank < 2; ++rank) {
        WriteStatisticsStep(src(), step, rank);
      }
    }
  }

  // Runs an import expected to fail with exit status 1 and `message`, and
  // checks that it touched neither the source nor the destination.
  void ExpectFailure(const std::vector<std::string>& args,
                     const std::string& message) {
    const auto before = Snapshot(src());
    const RunResult r = RunTprobe(root_, args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.err, "tprobe import: " + message + "\n");
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(Snapshot(src()), before);
    EXPECT_FALSE(fs::exists(out()));
  }

  fs::path root_;
};

// ---------------------------------------------------------------------------
// Tensor task.

TEST_F(ImportCliTest, TensorDumpBecomesTheExpectedTree) {
  WriteTensorDump();
  const auto before = Snapshot(src());
  const RunResult r =
      RunTprobe(root_, {"import", "--task", "tensor", "src", "out"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith(
                         "tprobe import: wrote 4 step directories with 84 "
                         "tensors to out (4 duplicates dropped) in "));
  const std::string data = "src/step0/rank0/dump_tensor_data/";
  EXPECT_THAT(r.err,
              HasSubstr("tprobe import: dropped duplicate " + data +
                        "Cell.model.layers.1.Block.forward.input.0_float32_94."
                        "npy (same name and data as " +
                        data +
                        "Cell.model.layers.1.Block.forward.input.0_float32_87."
                        "npy)\n"));
  ExpectTreeMatchesGolden(out(), "tensor");
  EXPECT_EQ(Snapshot(src()), before);

  const Json accounting =
      Json::parse(ReadFile(out() / "step1/rank1/tprobe.json"));
  EXPECT_EQ(accounting["duplicates_dropped"], 1);
}

TEST_F(ImportCliTest, TensorFilesKeepTheirBytesUnderTheirNewNames) {
  WriteTensorStep(src(), 0, 1);
  ASSERT_EQ(RunTprobe(root_, {"import", "--task", "tensor", "src", "out"}).code,
            0);
  const fs::path from = src() / "step0/rank1/dump_tensor_data";
  const fs::path to = out() / "step0/rank1/dump_tensor_data";
  EXPECT_EQ(ReadFile(to / "Cell.model.layers.0.act.GELU.forward.1.input.0.npy"),
            ReadFile(from / "Cell.model.layers.0.act.GELU.forward.input.0_"
                            "float32_59.npy"));
  EXPECT_EQ(
      ReadFile(to / "Cell.model.layers.0.attn.Attention.forward.0.input.0.npy"),
      ReadFile(from / "Cell.model.layers.0.attn.Attention.forward.input.0_in_"
                      "bfloat16_31.npy"));
}

TEST_F(ImportCliTest, StatisticsMatchNumpyOnTheWrittenFiles) {
  WriteTensorDump();
  ASSERT_EQ(RunTprobe(root_, {"import", "--task", "tensor", "src", "out"}).code,
            0);
  // numpy computes every floating tensor's statistics from the files the
  // tree points at; they must equal dump.json's exactly.
  const std::string script = R"(
import glob, json, os, sys
import numpy as np
os.chdir(sys.argv[1])  # dump_data_dir is relative to the tree's parent
checked = 0
for path in sorted(glob.glob(os.path.join(sys.argv[2], "step*/rank*/dump.json"))):
    doc = json.load(open(path))
    for name, entry in doc["data"].items():
        for t in entry["input_args"] + entry["output"]:
            if t["dtype"] not in ("Float32", "BFloat16", "Float16"):
                continue
            a = np.load(os.path.join(doc["dump_data_dir"], t["data_name"]))
            want = [a.max().item(), a.min().item(), a.mean().item(),
                    np.linalg.norm(a).item()]
            got = [t["Max"], t["Min"], t["Mean"], t["Norm"]]
            if want != got or list(a.shape) != t["shape"]:
                print(path, name, t["data_name"], want, got)
                sys.exit(1)
            checked += 1
print(checked)
)";
  const std::string output =
      testing::RunPythonScript(TPROBE_PYTHON, script, {root_.string(), "out"});
  EXPECT_EQ(output, "80\n");
}

TEST_F(ImportCliTest, ReRunningGivesTheSameBytes) {
  WriteTensorDump();
  ASSERT_EQ(RunTprobe(root_, {"import", "--task", "tensor", "src", "out"}).code,
            0);
  const std::string first = Listing(out());
  std::map<std::string, std::string> contents;
  for (const auto& e : fs::recursive_directory_iterator(out())) {
    if (e.is_regular_file()) contents[e.path().string()] = ReadFile(e.path());
  }
  ASSERT_EQ(RunTprobe(root_, {"import", "--task", "tensor", "src", "out"}).code,
            0);
  EXPECT_EQ(Listing(out()), first);
  for (const auto& [path, bytes] : contents) {
    EXPECT_EQ(ReadFile(path), bytes) << path;
  }
}

TEST_F(ImportCliTest, ImportsIntoTheSourceTreeWithoutChangingItsFiles) {
  WriteTensorStep(src(), 0, 0);
  WriteTensorStep(src(), 0, 1);
  const auto before = Snapshot(src());
  for (int run = 0; run < 2; ++run) {
    const RunResult r = RunTprobe(root_, {"import", "--task", "tensor", "src"});
    ASSERT_EQ(r.code, 0) << r.err;
    if (run == 1) {
      EXPECT_THAT(r.out, HasSubstr("left alone 42 source files already named "
                                   "in msprobe's form"));
    }
  }
  // Every original file is as it was; the tree was added beside them.
  auto after = Snapshot(src());
  for (const auto& [path, state] : before) {
    ASSERT_TRUE(after.contains(path)) << path;
    EXPECT_EQ(after[path], state) << path;
  }
  const Json dump = Json::parse(ReadFile(src() / "step0/rank1/dump.json"));
  EXPECT_EQ(dump["dump_data_dir"], "src/step0/rank1/dump_tensor_data");
  EXPECT_TRUE(fs::exists(src() / "step0/rank1/dump_tensor_data/"
                                 "Cell.model.Model.forward.0.input.0.npy"));
}

TEST_F(ImportCliTest, ALoneRankZeroIsWrittenAsRank) {
  WriteTensorStep(src(), 0, 0);
  ASSERT_EQ(RunTprobe(root_, {"import", "--task", "tensor", "src", "out"}).code,
            0);
  EXPECT_TRUE(fs::exists(out() / "step0/rank/dump.json"));
  EXPECT_FALSE(fs::exists(out() / "step0/rank0"));
  const Json dump = Json::parse(ReadFile(out() / "step0/rank/dump.json"));
  EXPECT_EQ(dump["dump_data_dir"], "out/step0/rank/dump_tensor_data");

  // With RANK_ID given, the rank keeps its number.
  fs::remove_all(out());
  ASSERT_EQ(RunTprobe(root_, {"import", "--task", "tensor", "--rank", "0",
                              "src", "out"})
                .code,
            0);
  EXPECT_TRUE(fs::exists(out() / "step0/rank0/dump.json"));
  EXPECT_FALSE(fs::exists(out() / "step0/rank"));
}

TEST_F(ImportCliTest, RankOptionImportsOneRank) {
  WriteTensorDump();
  ASSERT_EQ(
      RunTprobe(root_, {"import", "--task", "tensor", "--rank=1", "src", "out"})
          .code,
      0);
  EXPECT_EQ(Listing(out()).find("rank0"), std::string::npos);
  EXPECT_EQ(ReadFile(out() / "step1/rank1/dump.json"),
            ReadFile(fs::path(TPROBE_SOURCE_DIR) /
                     "tests/data/import/tensor/step1/rank1/dump.json"));

  const RunResult r = RunTprobe(
      root_, {"import", "--task", "tensor", "--rank", "7", "src", "out2"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(
      r.err,
      "tprobe import: src: no step{N}/rank{R}/dump_tensor_data/ directory "
      "found for rank 7 (rank7) (a MindSpore tensor dump has "
      "SRC/step{N}/rank{R}/dump_tensor_data/*.npy)\n");
}

TEST_F(ImportCliTest, WaitsForADumpStillBeingWritten) {
  WriteTensorStep(src(), 0, 0);
  // A writer adds one more call of the model half a second in.
  std::thread writer([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    WriteTensor(src() /
                    "step0/rank0/dump_tensor_data/"
                    "Cell.model.Model.forward.input.0_float32_900.npy",
                DType::kFloat32, {1}, {42});
  });
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = RunTprobe(
      root_, {"import", "--task", "tensor", "--wait", "2", "src", "out"});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  writer.join();
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("tprobe import: waiting until nothing under "
                               "src has changed for 2 s\n"));
  EXPECT_GE(elapsed, std::chrono::seconds(2));
  const Json dump = Json::parse(ReadFile(out() / "step0/rank/dump.json"));
  EXPECT_TRUE(dump["data"].contains("Cell.model.Model.forward.1"));
}

TEST_F(ImportCliTest, ShowsProgressOnATerminal) {
  WriteTensorDump();
  const std::string screen =
      RunTprobeOnTerminal(root_, {"import", "--task", "tensor", "src", "out"});
  EXPECT_THAT(screen, HasSubstr("\r\033[Ktprobe import: reading tensor files: "
                                "88/88 (100%)"));
  EXPECT_THAT(screen, HasSubstr("writing step directories: 4/4 (100%)"));
}

TEST_F(ImportCliTest, RejectsAMissingDirectory) {
  ExpectFailure({"import", "--task", "tensor", "nowhere", "out"},
                "nowhere: no such directory");
  ExpectFailure({"import", "--task", "statistics", "nowhere", "out"},
                "nowhere: no such directory");
}

TEST_F(ImportCliTest, RejectsASourceWithoutADump) {
  WriteFile(src() / "notes.txt", "x");
  ExpectFailure({"import", "--task", "tensor", "src", "out"},
                "src: no step{N}/rank{R}/dump_tensor_data/ directory found (a "
                "MindSpore tensor dump has "
                "SRC/step{N}/rank{R}/dump_tensor_data/*.npy)");
  ExpectFailure({"import", "--task", "statistics", "src", "out"},
                "src: no statistic.csv found under rank_{R}/ (a MindSpore "
                "statistics dump has SRC/rank_{R}/…/{N}/statistic.csv, at most "
                "4 levels below rank_{R})");
}

TEST_F(ImportCliTest, RejectsAFileNameThatDoesNotParse) {
  WriteTensorDump();
  const std::string name = "Cell.model.Model.sideways.input.0_float32_999.npy";
  WriteTensor(src() / "step1/rank0/dump_tensor_data" / name, DType::kFloat32,
              {1}, {1});
  ExpectFailure({"import", "--task", "tensor", "src", "out"},
                "src/step1/rank0/dump_tensor_data/" + name + ": '" + name +
                    "' is not a TensorDump file name: 'sideways' is not "
                    "forward or backward (expected "
                    "Cell.{path}.{Class}.{forward|backward}.{input|output}."
                    "{index}[_in]_{dtype}_{id}.npy)");
}

TEST_F(ImportCliTest, RejectsACorruptNpyFile) {
  WriteTensorDump();
  const std::string name = "Cell.model.Model.forward.input.0_float32_998.npy";
  WriteFile(src() / "step0/rank1/dump_tensor_data" / name, "not numpy at all");
  ExpectFailure({"import", "--task", "tensor", "src", "out"},
                "src/step0/rank1/dump_tensor_data/" + name +
                    ": not a .npy file (bad magic)");

  // A truncated file is as bad.
  const fs::path good = src() / "step0/rank1/dump_tensor_data" /
                        "Cell.model.Model.forward.input.0_float32_3.npy";
  fs::remove(src() / "step0/rank1/dump_tensor_data" / name);
  const std::string bytes = ReadFile(good);
  WriteFile(good, bytes.substr(0, bytes.size() - 4));
  ExpectFailure({"import", "--task", "tensor", "src", "out"},
                "src/step0/rank1/dump_tensor_data/"
                "Cell.model.Model.forward.input.0_float32_3.npy: truncated "
                ".npy file: shape (2, 3) of '<f4' needs 24 bytes of data, "
                "found 20");
}

// ---------------------------------------------------------------------------
// Statistics task.

TEST_F(ImportCliTest, StatisticsDumpBecomesTheExpectedTree) {
  WriteStatisticsDump();
  const auto before = Snapshot(src());
  const RunResult r =
      RunTprobe(root_, {"import", "--task", "statistics", "src", "out"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith(
                         "tprobe import: wrote 4 step directories with 56 "
                         "tensors to out (4 duplicates dropped) in "));
  EXPECT_THAT(r.err, HasSubstr("tprobe import: dropped duplicate "
                               "src/rank_1/Net/1/0/statistic.csv:9 (same name "
                               "and data as src/rank_1/Net/1/0/"
                               "statistic.csv:3)\n"));
  ExpectTreeMatchesGolden(out(), "statistics");
  EXPECT_EQ(Snapshot(src()), before);
}

TEST_F(ImportCliTest, RejectsAStatisticCsvWithoutTheNeededColumns) {
  WriteStatisticsDump();
  WriteFile(src() / "rank_1/Net/0/1/statistic.csv",
            "Op Type,Op Name,Task ID,Data Type,Shape,Max Value\n"
            "TensorDump,dump_tensor_data_Cell-m-M-forward-input-0,1,float32,"
            "\"(1)\",1\n");
  ExpectFailure({"import", "--task", "statistics", "src", "out"},
                "src/rank_1/Net/0/1/statistic.csv: missing columns "
                "\"Timestamp\", \"Slot\" (a statistic.csv needs Op Name, Data "
                "Type, Shape, Timestamp and Slot)");
}

// ---------------------------------------------------------------------------
// The command line itself.

TEST_F(ImportCliTest, HelpDescribesTheToolAndTheCommand) {
  const RunResult tool = RunTprobe(root_, {"--help"});
  EXPECT_EQ(tool.code, 0);
  EXPECT_EQ(
      tool.out,
      "Usage: tprobe COMMAND [ARGS...]\n\nCommands:\n"
      "  compare      compare two dump trees; name the first call that "
      "diverged\n"
      "  configure    give running ranks a new config.json, live\n"
      "  flush        drain every rank and write its open steps now\n"
      "  import       turn MindSpore graph-mode raw dumps into an msprobe "
      "dump tree\n"
      "  nan-analyze  find the call and rank where an inf or NaN first "
      "appeared\n"
      "  recover      rebuild the steps a killed tprobed left as "
      "journals\n"
      "  shutdown     make tprobed write everything and exit\n"
      "  start        make running ranks capture steps, live\n"
      "  status       show tprobed's ranks: state, step, backlog, "
      "records, drops, last error\n"
      "  stop         make running ranks stop capturing, live\n"
      "\nRun 'tprobe COMMAND --help' for a command's options.\n");
  const RunResult import = RunTprobe(root_, {"import", "--help"});
  EXPECT_EQ(import.code, 0);
  EXPECT_THAT(import.out,
              ::testing::StartsWith("Usage: tprobe import --task "
                                    "tensor|statistics [--rank R] [--wait N] "
                                    "SRC [DST]\n"));
}

TEST_F(ImportCliTest, BadCommandLinesExitWithStatusTwo) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"import", "src"}, "--task tensor|statistics is required"},
      {{"import", "--task", "pictures", "src"},
       "--task must be tensor or statistics, not 'pictures'"},
      {{"import", "--task", "tensor"}, "SRC is missing"},
      {{"import", "--task", "tensor", "a", "b", "c"},
       "too many arguments: 'c'"},
      {{"import", "--task", "tensor", "--rank", "-1", "src"},
       "--rank must be a whole number from 0 to 2147483647, not '-1'"},
      {{"import", "--task", "tensor", "--rank", "x", "src"},
       "--rank must be a whole number from 0 to 2147483647, not 'x'"},
      {{"import", "--task", "tensor", "--wait"}, "--wait needs a value"},
      {{"import", "--task", "tensor", "--colour", "src"},
       "unknown option '--colour'"},
  };
  for (const Case& c : cases) {
    const RunResult r = RunTprobe(root_, c.args);
    EXPECT_EQ(r.code, 2) << c.message;
    EXPECT_EQ(r.err, "tprobe import: " + c.message +
                         "\nRun 'tprobe import --help' for usage.\n");
  }
  const RunResult unknown = RunTprobe(root_, {"export"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_THAT(unknown.err, ::testing::StartsWith(
                               "tprobe: unknown command 'export'\n\nUsage:"));
}

}  // namespace
}  // namespace tprobe::import
