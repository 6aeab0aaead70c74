// Call stacks for stack.json, read from the interpreter's frames.
//
// A stack is msprobe's list of lines ``File {path}, line {n}, in
// {function}, \n {source line}``, innermost frame first, with tprobe's own
// frames (those whose file is under the package directory) and frames
// without source text left out. Formatting costs a linecache lookup per
// frame, so the formatted stacks are cached by the frames' (code, last
// instruction) pairs: a training loop repeats the same few hundred stacks,
// and a hit costs one walk over the frames (no line-table scan), or none
// when the capture comes from the same running frame as the last one.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_CALL_STACK_H_
#define TPROBE_CLIENT_PYTHON_BINDING_CALL_STACK_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>

#include "client/entry_builder.h"

namespace tprobe::python {

// One formatted stack, shared by every capture of the same frames, with
// the id it was last interned under (valid while the recorder's
// InternToken() is `token`): a hit costs no hash of the text.
struct Stack {
  client::StackText text;
  mutable uint64_t token = 0;
  mutable uint32_t id = 0;
};

// The frames under `dir` are tprobe's own (left out of every stack).
void SetOwnFrames(std::string dir);

// The running Python code's stack; null when there is no Python frame.
// Needs the GIL; raises nothing but pybind11's errors.
std::shared_ptr<const Stack> CaptureStack();

// Lets go of the frame CaptureStack keeps from its last walk (it holds
// that frame's locals once the frame returns): at the end of a step.
void ForgetCapturedFrame();

// A stack given frame by frame, innermost first, each a (path, line or
// None, function, source text or None) tuple, formatted and filtered as a
// captured stack's frames are: a compiled graph's call, as Dynamo traced
// it. Raises pybind11's cast error for another shape.
std::shared_ptr<Stack> MakeStack(const pybind11::iterable& frames);

// `stack` interned in this thread's ring of `core`; 0 when it could not be
// sent.
uint32_t InternStack(client::Recorder& core, const Stack& stack);

// The running Python code's stack, interned in this thread's ring of
// `core`; 0 when there is no Python frame. Raises as CaptureStack does.
uint32_t InternCapturedStack(client::Recorder& core);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_CALL_STACK_H_
