// Call stacks read from the interpreter's frames, cached by frames
// (call_stack.h).

#include "client/python/binding/call_stack.h"

#include <Python.h>
#include <frameobject.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/python/binding/py_compat.h"
#include "client/recorder.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

constexpr size_t kMaxCached = 20000;

// The frames of a stack: (code object, instruction offset) pairs, innermost
// first. The offset is read directly; the line it maps to costs a scan of
// the code's line table, so lines are found only for a new stack.
using Frames = std::vector<std::pair<PyObject*, int>>;

// The frame's last instruction (an offset that maps to one line).
int LastInstruction(PyFrameObject* frame) {
#if PY_VERSION_HEX >= 0x030B0000
  return PyFrame_GetLasti(frame);
#else
  return frame->f_lasti;
#endif
}

struct FramesHash {
  size_t operator()(const Frames& frames) const {
    uint64_t h = 1469598103934665603ull;
    for (const auto& [code, line] : frames) {
      h = (h ^ reinterpret_cast<uintptr_t>(code)) * 1099511628211ull;
      h = (h ^ static_cast<uint64_t>(line)) * 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

struct Cached {
  std::vector<py::object> codes;  // keeps the key's code objects alive
  std::shared_ptr<const Stack> stack;
};

struct Cache {
  std::string own_dir;
  std::unordered_map<Frames, Cached, FramesHash> stacks;
  Frames frames;  // the last walk: the frames of `top`
  // The innermost frame of that walk (held, so that its address is not
  // reused), or null. While that frame runs, its callers wait at the calls
  // they made, so a capture from it needs only its own offset read again.
  // Not kept for a generator or coroutine, which may be resumed from
  // elsewhere.
  PyObject* top = nullptr;
};

Cache& TheCache() {
  static Cache* cache = new Cache();  // lives as long as the interpreter
  return *cache;
}

// Whether a frame of the file `path` is tprobe's own (left out).
bool IsOwn(const Cache& cache, std::string_view path) {
  return !cache.own_dir.empty() &&
         path.substr(0, cache.own_dir.size()) == cache.own_dir;
}

// Adds a frame's line to `stack` (`text`: its source line, as linecache
// gives it), unless the frame has no line or no source text. The caller
// leaves out tprobe's own frames (IsOwn).
void AddLine(const std::string& path, int line, const std::string& function,
             py::handle text, Stack* stack) {
  if (line == 0) return;
  const std::string stripped = text.attr("strip")().cast<std::string>();
  if (stripped.empty()) return;
  stack->text.Add("File " + path + ", line " + std::to_string(line) + ", in " +
                  function + ", \n " + stripped);
}

// Adds the line of `frame` to `stack`, unless it is tprobe's own.
void AddFrame(const Cache& cache, const py::object& getline,
              PyFrameObject* frame, Stack* stack) {
  py::object code_ref = py::reinterpret_steal<py::object>(
      reinterpret_cast<PyObject*>(PyFrame_GetCode(frame)));
  auto* code = reinterpret_cast<PyCodeObject*>(code_ref.ptr());
  const int line = PyFrame_GetLineNumber(frame);
  py::handle filename(code->co_filename);
  const std::string path = py::str(filename).cast<std::string>();
  if (IsOwn(cache, path) || line == 0) return;
  AddLine(path, line, py::str(py::handle(code->co_name)).cast<std::string>(),
          getline(filename, line), stack);
}

// The stack of `frame` and its callers, formatted.
std::shared_ptr<const Stack> Format(const Cache& cache, PyFrameObject* frame) {
  auto stack = std::make_shared<Stack>();
  py::object getline = py::module_::import("linecache").attr("getline");
  py::object held =
      py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(frame));
  while (frame != nullptr) {
    AddFrame(cache, getline, frame, stack.get());
    frame = PyFrame_GetBack(frame);  // new reference
    held =
        py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(frame));
  }
  return stack;
}

// The (code, offset) pairs of `frame` and its callers, innermost first.
void Walk(PyFrameObject* frame, Frames* frames) {
  frames->clear();
  py::object held =
      py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(frame));
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    frames->emplace_back(reinterpret_cast<PyObject*>(code),
                         LastInstruction(frame));
    Py_DECREF(code);                 // the frame holds it while the walk runs
    frame = PyFrame_GetBack(frame);  // new reference
    held =
        py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(frame));
  }
}

// Whether `frame` is a generator's or coroutine's, whose callers may differ
// each time it resumes.
bool Resumable(PyFrameObject* frame) {
  PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
  const int flags = code->co_flags;
  Py_DECREF(code);
  return (flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR |
                   CO_ITERABLE_COROUTINE)) != 0;
}

}  // namespace

void ForgetCapturedFrame() { Py_CLEAR(TheCache().top); }

void SetOwnFrames(std::string dir) { TheCache().own_dir = std::move(dir); }

std::shared_ptr<const Stack> CaptureStack() {
  Cache& cache = TheCache();
  PyFrameObject* const top = PyEval_GetFrame();  // borrowed
  if (top == nullptr) return nullptr;
  Frames& frames = cache.frames;
  PyObject* const top_object = reinterpret_cast<PyObject*>(top);
  if (top_object == cache.top) {
    frames.front().second = LastInstruction(top);
  } else {
    Py_CLEAR(cache.top);  // `frames` is not its walk while this one runs
    Walk(top, &frames);
    if (!Resumable(top)) cache.top = Py_NewRef(top_object);
  }
  auto found = cache.stacks.find(frames);
  if (found != cache.stacks.end()) return found->second.stack;
  if (cache.stacks.size() >= kMaxCached) cache.stacks.clear();
  Cached cached;
  cached.codes.reserve(frames.size());
  for (const auto& frame_code : frames) {
    cached.codes.push_back(
        py::reinterpret_borrow<py::object>(frame_code.first));
  }
  cached.stack = Format(cache, top);
  std::shared_ptr<const Stack> stack = cached.stack;
  cache.stacks.emplace(frames, std::move(cached));
  return stack;
}

std::shared_ptr<Stack> MakeStack(const py::iterable& frames) {
  const Cache& cache = TheCache();
  auto stack = std::make_shared<Stack>();
  for (py::handle frame : frames) {
    auto [path, line, function, text] = frame.cast<
        std::tuple<std::string, py::object, std::string, py::object>>();
    if (IsOwn(cache, path) || line.is_none() || text.is_none()) continue;
    AddLine(path, line.cast<int>(), function, py::str(text), stack.get());
  }
  return stack;
}

uint32_t InternStack(client::Recorder& core, const Stack& stack) {
  const uint64_t token = core.InternToken();
  if (token != 0 && stack.token == token) return stack.id;
  const uint32_t id = stack.text.Intern(core);
  if (id != 0) {
    stack.token = token;
    stack.id = id;
  }
  return id;
}

uint32_t InternCapturedStack(client::Recorder& core) {
  std::shared_ptr<const Stack> stack = CaptureStack();
  return stack ? InternStack(core, *stack) : 0;
}

}  // namespace tprobe::python
