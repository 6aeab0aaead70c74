// tools/compare: pairing trees (tree_pairs.cc), tensor mode on .npy files
// mapped from disk (tensor_file.cc, row_compare.cc), the whole run
// (comparison.cc) and its CSV and HTML reports, and nan-analyze
// (nan_analysis.cc), on small trees the test writes.

#include "tools/compare/comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/dump/npy.h"
#include "tools/compare/input/tensor_file.h"
#include "tools/compare/nan_analysis.h"
#include "tools/compare/report/csv_report.h"
#include "tools/compare/report/html_report.h"

namespace tprobe::compare {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class Trees : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("comparison_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A rank folder with one entry whose output is `values`, saved as .npy.
  void WriteRank(const fs::path& rank, const std::vector<float>& values,
                 const std::string& entry = "Functional.relu.0.forward") {
    fs::create_directories(rank / "dump_tensor_data");
    const std::string file = entry + ".output.0.npy";
    const int64_t shape[] = {static_cast<int64_t>(values.size())};
    ASSERT_TRUE(dump::WriteNpy((rank / "dump_tensor_data" / file).string(),
                               DType::kFloat32, shape,
                               std::as_bytes(std::span(values)))
                    .ok());
    std::ofstream(rank / "dump.json")
        << R"({"task": "tensor", "level": "L1", "framework": "pytorch",
        "data": {")"
        << entry
        << R"(": {"output": [{"type": "torch.Tensor", "dtype": "torch.float32",
        "shape": [)"
        << values.size()
        << R"(], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0,
        "requires_grad": false, "data_name": ")"
        << file << R"("}]}}})";
    std::ofstream(rank / "construct.json")
        << "{\"" << entry << R"(": "Module.act.ReLU.forward.0",
        "Module.act.ReLU.forward.0": null})";
  }

  Result<CompareResult> Run(const fs::path& a, const fs::path& b,
                            bool strict = false) {
    tools::Reporter quiet(nullptr, false);
    CompareOptions options;
    options.strict_verdicts = strict;
    return CompareTrees(a.string(), b.string(), options, quiet);
  }

  fs::path dir_;
};

TEST_F(Trees, MappedTensorReadsEveryDtypeAsDouble) {
  const std::vector<int32_t> ints{-3, 0, 7};
  const int64_t shape[] = {3};
  const std::string path = (dir_ / "i.npy").string();
  ASSERT_TRUE(
      dump::WriteNpy(path, DType::kInt32, shape, std::as_bytes(std::span(ints)))
          .ok());
  Result<MappedTensor> t = MappedTensor::Open(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<double> out(3);
  t->ToDouble(0, out);
  EXPECT_EQ(out, (std::vector<double>{-3, 0, 7}));
  // A .pt that is not a torch.save zip, or a truncated one, is refused
  // with the file's name (the row then falls back to its statistics).
  std::ofstream(dir_ / "bad.pt") << "not a zip at all, but long enough";
  EXPECT_THAT(MappedTensor::Open((dir_ / "bad.pt").string()).status().message(),
              HasSubstr("bad.pt: not a torch.save file"));
  std::ofstream(dir_ / "short.pt") << "PK\x05\x06";
  EXPECT_FALSE(MappedTensor::Open((dir_ / "short.pt").string()).ok());
  std::ofstream(dir_ / "bad.npy") << "not numpy";
  EXPECT_THAT(
      MappedTensor::Open((dir_ / "bad.npy").string()).status().message(),
      HasSubstr("bad magic"));
}

TEST_F(Trees, TensorModeComparesTheFilesAndNamesTheModule) {
  WriteRank(dir_ / "t" / "step0" / "rank0", {0.0f, 1.0f, 2.0f});
  WriteRank(dir_ / "b" / "step0" / "rank0", {0.0f, 1.0f, 2.0f});
  WriteRank(dir_ / "t" / "step0" / "rank1", {0.0f, 1.0f, -5.0f});
  WriteRank(dir_ / "b" / "step0" / "rank1", {0.0f, 1.0f, 2.0f});
  // msprobe's check: the output's Cosine is 0.1 below its inputs' (none:
  // 1), a warning; tprobe's stricter rule makes it an error.
  Result<CompareResult> strict = Run(dir_ / "t", dir_ / "b", true);
  ASSERT_TRUE(strict.ok()) << strict.status().message();
  EXPECT_EQ(strict->pairs[1].rows[0].result, "error");
  Result<CompareResult> result = Run(dir_ / "t", dir_ / "b");
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->pairs.size(), 2u);
  EXPECT_EQ(result->pairs[0].pair.label, "step0/rank0");
  EXPECT_TRUE(result->pairs[0].passed());
  ASSERT_EQ(result->first_pair, 1u);
  const PairResult& p = result->pairs[1];
  EXPECT_EQ(p.mode, Mode::kTensor);
  const RowResult& r = p.rows[*p.first_divergence];
  ASSERT_TRUE(r.tensor);
  EXPECT_EQ(r.tensor->max_abs, 7.0);
  EXPECT_EQ(r.result, "warning");
  EXPECT_EQ(r.message,
            "[\"warning: The input/parameters of Cosine > 0.9, and "
            "input/parameters - output > 0.1\"]");
  EXPECT_EQ(p.DumpOf(r).ModulePath("Functional.relu.0.forward"),
            "Module.act.ReLU.forward.0 > Functional.relu.0.forward");

  fs::create_directories(dir_ / "out");
  ASSERT_TRUE(WriteCsv(p, (dir_ / "out").string()).ok());
  std::ifstream csv(dir_ / "out" / "compare_result_step0_rank1.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_THAT(header, HasSubstr("NPU Name,Bench Name,NPU Dtype"));
  EXPECT_THAT(header, HasSubstr("Cosine,EucDist,MaxAbsErr,MaxRelativeErr"));
  std::string row;
  std::getline(csv, row);
  EXPECT_THAT(row, HasSubstr(",warning,"));
  const std::string html = HtmlReport(*result, "t", "b");
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("Module.act.ReLU.forward.0 &gt; "));
  // The chain of modules, and the module tree open along it, coloured by
  // the worst verdict under each node.
  EXPECT_THAT(html, HasSubstr("<ol id=\"chain\"><li><code>Module.act.ReLU."
                              "forward.0</code></li><li><code>Functional."
                              "relu.0.forward</code></li></ol>"));
  EXPECT_THAT(html, HasSubstr("<details open><summary><span class=\"warning"
                              "\">&#9632;</span> <b>Module.act.ReLU.forward."
                              "0</b> <small>(1 warning)</small></summary>"));
  EXPECT_EQ(html.find("<script src"), std::string::npos);
}

TEST_F(Trees, ARankOnlyOneSideHasIsAllMissing) {
  WriteRank(dir_ / "t" / "step0" / "rank0", {1.0f, 2.0f});
  WriteRank(dir_ / "b" / "step0" / "rank0", {1.0f, 2.0f});
  WriteRank(dir_ / "b" / "step0" / "rank1", {1.0f, 2.0f});
  Result<CompareResult> result = Run(dir_ / "t", dir_ / "b");
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->pairs.size(), 2u);
  EXPECT_FALSE(result->pairs[1].pair.target);
  EXPECT_EQ(result->counts[static_cast<int>(Verdict::kMissing)], 1u);
  EXPECT_FALSE(result->passed());
}

TEST_F(Trees, InputsOfDifferentKindsAreRefused) {
  WriteRank(dir_ / "t" / "step0" / "rank0", {1.0f});
  Result<CompareResult> result =
      Run(dir_ / "t", dir_ / "t" / "step0" / "rank0" / "dump.json");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(Run(dir_ / "nothing", dir_ / "t").ok());
}

TEST_F(Trees, NanAnalyzeFollowsCommunication) {
  auto write = [&](const std::string& rank, const std::string& data) {
    fs::create_directories(dir_ / "step0" / rank);
    std::ofstream(dir_ / "step0" / rank / "dump.json")
        << R"({"task": "statistics", "data": {)" << data << "}}";
  };
  auto t = [](const char* max) {
    return std::string(R"({"type": "torch.Tensor", "dtype": "torch.float32",
      "shape": [2], "Max": )") +
           max + R"(, "Min": 0.0, "Mean": 0.5,
      "Norm": 1.0})";
  };
  // rank0 gets its NaN out of an all_reduce; rank1 made it in Torch.log.
  write("rank0",
        R"("Torch.exp.0.forward": {"input_args": [)" + t("1.0") +
            R"(], "output": [)" + t("2.0") +
            R"(]}, "Distributed.all_reduce.0.forward": {"input_args": [)" +
            t("1.0") + R"(], "output": [)" + t("NaN") + "]}");
  write("rank1",
        R"("Torch.log.0.forward": {"input_args": [)" + t("1.0") +
            R"(], "output": [)" + t("NaN") +
            R"(]}, "Distributed.all_reduce.0.forward": {"input_args": [)" +
            t("NaN") + R"(], "output": [)" + t("NaN") + "]}");
  Result<NanReport> report = AnalyzeNan((dir_ / "step0").string(), 2);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->findings.size(), 2u);
  ASSERT_TRUE(report->origin);
  const NanFinding& origin = report->findings[*report->origin];
  EXPECT_EQ(origin.rank, 1);
  EXPECT_EQ(origin.entry, "Torch.log.0.forward");
  EXPECT_TRUE(origin.made_here);
  EXPECT_THAT(DescribeNanReport(*report),
              HasSubstr("rank0: first at Distributed.all_reduce.0.forward "
                        "(received from another rank)"));
}

}  // namespace
}  // namespace tprobe::compare
