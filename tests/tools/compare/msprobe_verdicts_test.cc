// tools/compare/msprobe_verdicts.cc and msprobe_cells.cc:
// msprobe 26.x's per-API checks and statistics cells on hand-made calls. (The
// live agreement with msprobe itself is tests/python/pytorch/
// msprobe_verdicts_test.py.)

#include "tools/compare/msprobe_verdicts.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "tools/compare/input/python_repr.h"
#include "tools/compare/msprobe/msprobe_cells.h"
#include "tools/compare/report/report_format.h"

namespace tprobe::compare {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Row Tensor(const std::string& name, double max, double min, double mean,
           double norm) {
  Row r;
  r.name = name;
  r.is_tensor = true;
  r.dtype = "torch.float32";
  r.shape = {4};
  r.requires_grad = false;
  r.stats = {max, min, mean, norm};
  return r;
}

// One call's rows, the same names on both sides, compared in `mode`.
struct Call {
  std::string entry = "Tensor.add_.0.forward";
  Dump target, baseline;
  std::vector<RowResult> rows;

  void Add(Row t, Row b) {
    t.entry = b.entry = 0;
    target.rows.push_back(t);
    baseline.rows.push_back(b);
  }
  void Judge(Mode mode = Mode::kStatistics, bool strict = false,
             bool any_dtypes = false) {
    target.entries = baseline.entries = {entry};
    rows.clear();
    for (size_t i = 0; i < target.rows.size(); ++i) {
      rows.push_back(CompareRow({i, i, false}, &target, &baseline, mode));
    }
    ApplyMsprobeVerdicts(rows, &target, &baseline, mode, strict, any_dtypes);
  }
};

TEST(MsprobeVerdictsTest,
     DtypesPairAcrossFrameworksByFamilyOrAnyUnderDataMapping) {
  // MindSpore's Float32 against torch.float32: one family, judged as a
  // pair, and (as msprobe's check reads the names) a dtype error.
  Call c;
  Row ms = Tensor("Tensor.add_.0.forward.output.0", 1, 1, 1, 1);
  ms.dtype = "Float32";
  c.Add(ms, Tensor("Tensor.add_.0.forward.output.0", 1, 1, 1, 1));
  c.Judge();
  EXPECT_EQ(c.rows[0].message,
            "[\"error: The dtype of NPU and Bench are inconsistent.\"]");
  // Int32 against torch.float32: msprobe does not pair them (the row
  // keeps tprobe's own message) ...
  c.target.rows[0].dtype = "Int32";
  c.Judge();
  EXPECT_EQ(c.rows[0].message, "Dtype Int32 against torch.float32. ");
  // ... unless a data mapping pairs them.
  c.Judge(Mode::kStatistics, false, /*any_dtypes=*/true);
  EXPECT_EQ(c.rows[0].message,
            "[\"error: The dtype of NPU and Bench are inconsistent.\"]");
}

TEST(MsprobeVerdictsTest, AnOutputOverHalfOffWithSteadyInputsIsAnError) {
  // BatchNorm's num_batches_tracked.add_(1): 2 against 1, a 100 % change
  // that tprobe's own rule (|diff| > half the larger value) let pass.
  Call c;
  c.Add(Tensor("Tensor.add_.0.forward.input.0", 1, 1, 1, 1),
        Tensor("Tensor.add_.0.forward.input.0", 1, 1, 1, 1));
  c.Add(Tensor("Tensor.add_.0.forward.output.0", 2, 2, 2, 2),
        Tensor("Tensor.add_.0.forward.output.0", 1, 1, 1, 1));
  c.Judge();
  EXPECT_EQ(c.rows[0].result, "pass");
  EXPECT_EQ(c.rows[0].message, "[]");
  EXPECT_EQ(c.rows[1].verdict, Verdict::kError);
  EXPECT_EQ(c.rows[1].message,
            "[\"error: The NormRelativeErr of output is greater than 0.5.\", "
            "\"warning: The norm relative error of output is 10 times that "
            "of input.\"]");
}

TEST(MsprobeVerdictsTest, OutputErrorTenTimesTheInputsIsAWarning) {
  Call c;
  c.Add(Tensor("Tensor.add_.0.forward.input.0", 1, 1, 1, 100),
        Tensor("Tensor.add_.0.forward.input.0", 1, 1, 1, 100.1));
  c.Add(Tensor("Tensor.add_.0.forward.output.0", 1, 1, 1, 110),
        Tensor("Tensor.add_.0.forward.output.0", 1, 1, 1, 100));
  c.Judge();
  EXPECT_EQ(c.rows[0].result, "pass");
  EXPECT_EQ(c.rows[1].result, "warning");
  // The same error on the input too: nothing to flag.
  c.target.rows[0].stats.norm = 90;
  c.Judge();
  EXPECT_EQ(c.rows[1].result, "pass");
  // tprobe's rule sees no difference over half either; a large one it does.
  c.target.rows[1].stats.max = 3;
  c.Judge(Mode::kStatistics, /*strict=*/true);
  EXPECT_EQ(c.rows[1].result, "warning");
  c.Judge();
  EXPECT_EQ(c.rows[1].result, "pass");
}

TEST(MsprobeVerdictsTest, NanInTheTargetOnlyScalarsAndDtypesAreErrors) {
  Call c;
  c.Add(Tensor("Tensor.add_.0.forward.input.0", kInf, 1, 1, 1),
        Tensor("Tensor.add_.0.forward.input.0", 1, 1, 1, 1));
  Row scalar_t, scalar_b;
  scalar_t.name = scalar_b.name = "Tensor.add_.0.forward.input.1";
  scalar_t.dtype = scalar_b.dtype = "<class 'int'>";
  scalar_t.stats = {2, 2, 2, 2, 0xF};
  scalar_b.stats = {3, 3, 3, 3, 0xF};
  scalar_t.checksum = "2";
  scalar_b.checksum = "3";
  c.Add(scalar_t, scalar_b);
  Row half = Tensor("Tensor.add_.0.forward.output.0", 1, 1, 1, 1);
  half.dtype = "torch.float16";
  c.Add(half, Tensor("Tensor.add_.0.forward.output.0", 1, 1, 1, 1));
  c.Judge();
  EXPECT_EQ(c.rows[0].message,
            "[\"error: There is nan/inf/-inf in the maximum or minimum value "
            "of NPU.\"]");
  EXPECT_EQ(c.rows[1].message,
            "[\"error: The scalar parameters of NPU and Bench are "
            "inconsistent.\"]");
  EXPECT_EQ(c.rows[2].message,
            "[\"error: The dtype of NPU and Bench are inconsistent.\"]");
  // An inf on the baseline's side only is msprobe's pass.
  std::swap(c.target.rows[0], c.baseline.rows[0]);
  c.Judge();
  EXPECT_EQ(c.rows[0].result, "pass");
  c.Judge(Mode::kStatistics, /*strict=*/true);
  EXPECT_EQ(c.rows[0].result, "error");
}

TEST(MsprobeVerdictsTest, CallsMsprobeDoesNotJudgePass) {
  Call c;
  c.entry = "Tensor.to.0.forward";
  c.Add(Tensor("Tensor.to.0.forward.input.0", 1, 1, 1, 1),
        Tensor("Tensor.to.0.forward.input.0", 1, 1, 1, 1));
  c.Add(Tensor("Tensor.to.0.forward.output.0", 9, 9, 9, 9),
        Tensor("Tensor.to.0.forward.output.0", 1, 1, 1, 1));
  c.target.rows[1].checksum = "1";
  c.baseline.rows[1].checksum = "2";
  c.Judge();
  EXPECT_EQ(c.rows[1].result, "pass");
  c.Judge(Mode::kMd5);
  EXPECT_EQ(c.rows[1].result, "pass");
  c.entry = "Tensor.add_.0.forward";
  c.Judge(Mode::kMd5);
  EXPECT_EQ(c.rows[1].result, "error");
}

TEST(MsprobeCellsTest, StatisticsAreWrittenAsMsprobeWritesThem) {
  Row t = Tensor("x", 0.17349910736083807, -3, 1e-05, 2);
  Row b = Tensor("x", 0.5, -3, 0, 4);
  t.stats.integral = 0b0010;  // Min was the integer -3
  EXPECT_EQ(StatCellText(&t, 0), "0.17349910736083807");
  EXPECT_EQ(StatCellText(&t, 1), "-3");
  EXPECT_EQ(StatCellText(&t, 2), "1e-05");
  EXPECT_EQ(StatCellText(nullptr, 0), "N/A");
  const auto d = StatDiffs(&t, &b);
  EXPECT_EQ(d[0].diff, "-0.32650089263916193");
  EXPECT_EQ(d[0].relative, "65.30017852783239%");
  // -3 (an integer) against -3.0: texts differ, the difference is 0.0.
  EXPECT_EQ(d[1].diff, "0.0");
  EXPECT_EQ(d[1].relative, "0.0%");
  EXPECT_EQ(d[2].relative, "inf");  // the baseline's Mean is 0
  EXPECT_EQ(d[3].diff, "-2.0");
  EXPECT_EQ(d[3].relative, "50.0%");
  ASSERT_TRUE(d[3].percent);
  EXPECT_EQ(*d[3].percent, 0.5);
  EXPECT_EQ(StatDiffs(&t, &t)[0].diff, "0");
  EXPECT_EQ(StatDiffs(&t, nullptr)[0].relative, "N/A");
}

TEST(ReportFormatTest, PyReprIsPythonsRepr) {
  EXPECT_EQ(PyRepr(0.1), "0.1");
  EXPECT_EQ(PyRepr(2.0), "2.0");
  EXPECT_EQ(PyRepr(-0.0), "-0.0");
  EXPECT_EQ(PyRepr(1e16), "1e+16");
  EXPECT_EQ(PyRepr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(PyRepr(0.0001), "0.0001");
  EXPECT_EQ(PyRepr(0.00001234), "1.234e-05");
  EXPECT_EQ(PyRepr(-3.9020040035247803), "-3.9020040035247803");
  EXPECT_EQ(PyRepr(1.5e300), "1.5e+300");
  EXPECT_EQ(PyRepr(kInf), "inf");
  EXPECT_EQ(FormatMetric(0.99999999999999), "1.0");
  EXPECT_EQ(FormatMetric(1e-7), "1e-07");
  EXPECT_EQ(PyStrRepr("a, \n b"), "'a, \\n b'");
  EXPECT_EQ(PyStrRepr("it's"), "\"it's\"");
  EXPECT_EQ(PyStrRepr("'\"\\"), "'\\'\"\\\\'");
  EXPECT_EQ(PyListRepr({"x", "y"}), "['x', 'y']");
}

}  // namespace
}  // namespace tprobe::compare
