// tools/compare: an API's frame scope from its stack lines
// (stack_scope.cc), msprobe 26.2's set_stack_scope, on lines shaped as
// msprobe's own layer-mapping fixtures have them.

#include "tools/compare/msprobe/stack_scope.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tprobe::compare {
namespace {

const std::string kMsWrapper =
    "File /p/msprobe/mindspore/dump/hook_cell/wrap_api.py, line 98, in "
    "api_function, \n return ApiTemplate(api_name, api_dict, prefix, "
    "hook)(*args, **kwargs)";
const std::string kPtWrapper =
    "File /p/msprobe/pytorch/hook_module/wrap_tensor.py, line 61, in "
    "tensor_op_template, \n return TensorOPTemplate(op_name, hook)(*args, "
    "**kwargs)";

std::string Line(const std::string& file, const std::string& func) {
  return "File " + file + ", line 7, in " + func + ", \n x = f(y, z)";
}

TEST(StackScopeTest, MindSporeTakesTheFrameworkFunctionThatCalledTheApi) {
  // Tensor.__getitem__ (MindSpore) calls __add__ for the user: the last of
  // the framework lines after the wrapper names it.
  const std::vector<std::string> lines = {
      Line("/p/site-packages/mindspore/nn/cell.py", "_run_construct"),
      kMsWrapper,
      Line("/p/site-packages/mindspore/ops/_compile_utils.py",
           "format_index_tensor"),
      Line("/p/site-packages/mindspore/common/tensor.py", "__getitem__"),
      Line("/net/utils.py", "get_masks"),
      Line("/p/site-packages/mindspore/common/tensor.py", "later"),
  };
  EXPECT_EQ(FrameStackScope(lines, "mindspore"), "__getitem__");
  // Called from user code: no frame scope.
  EXPECT_EQ(FrameStackScope({kMsWrapper, Line("/net/utils.py", "get_masks"),
                             Line("/p/site-packages/mindspore/t.py", "g")},
                            "mindspore"),
            "");
}

TEST(StackScopeTest, TheCallersLayerEndsTheLinesThatCount) {
  // MindSpore: a line with "construct" after the wrapper ends them, so a
  // framework line after it is not the entry point.
  EXPECT_EQ(
      FrameStackScope({kMsWrapper, Line("/p/package/mindspore/a.py", "helper"),
                       Line("/net/layers.py", "construct"),
                       Line("/p/package/mindspore/b.py", "other")},
                      "mindspore"),
      "helper");
  // PyTorch: "in forward," or "in backward," does; "in forward_step," not.
  const std::vector<std::string> pt = {
      kPtWrapper, Line("/p/site-packages/torch/functional.py", "norm"),
      Line("/net/model.py", "forward")};
  EXPECT_EQ(FrameStackScope(pt, "pytorch"), "norm");
  EXPECT_EQ(FrameStackScope({kPtWrapper, Line("/net/model.py", "forward"),
                             Line("/p/site-packages/torch/m.py", "x")},
                            "pytorch"),
            "");
  EXPECT_EQ(FrameStackScope({kPtWrapper, Line("/net/a.py", "forward_step"),
                             Line("/p/site-packages/torch/m.py", "x")},
                            "pytorch"),
            "");
  // Without a wrapper line, from the first line.
  EXPECT_EQ(FrameStackScope({Line("/p/package/torch/nn/f.py", "linear"),
                             Line("/net/model.py", "run")},
                            "pytorch"),
            "linear");
}

TEST(StackScopeTest, SkippedFilesAndFunctionsGiveNoScope) {
  for (const std::string& line :
       {Line("/p/site-packages/mindspore/nn/cell.py", "_run_construct"),
        Line("/p/site-packages/mindspore/nn/cell.py", "__call__"),
        Line("/p/site-packages/mindspore/msprobe/x.py", "f"),
        Line("/p/MindSpeed/site-packages/mindspore/x.py", "f")}) {
    EXPECT_EQ(FrameStackScope({kMsWrapper, line}, "mindspore"), "") << line;
  }
}

TEST(StackScopeTest, WhatMsprobeCannotReadGivesNoScope) {
  const std::string frame =
      Line("/p/site-packages/torch/functional.py", "norm");
  EXPECT_EQ(FrameStackScope({kPtWrapper, frame}, "jax"), "");
  EXPECT_EQ(FrameStackScope({}, "pytorch"), "");
  // Too few fields or words where msprobe indexes them.
  EXPECT_EQ(
      FrameStackScope({"File /p/site-packages/torch/f.py, line 3"}, "pytorch"),
      "");
  EXPECT_EQ(
      FrameStackScope({"File /p/site-packages/torch/f.py, 3, norm"}, "pytorch"),
      "");
}

}  // namespace
}  // namespace tprobe::compare
