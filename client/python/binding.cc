// tprobe._C: the Python binding of the client core (pybind11).
//
// A Session is one rank's dump session (client/session.h), which names,
// counts and filters every call. Python hooks report calls by their name
// base (module_begin/module_end, api_begin/api_end, *_backward, param_grad)
// with the Python values they saw; a *_begin returns a Call handle (the
// session's plan of the call) that the matching *_end takes back. This file
// walks the values into the entry (client/entry_builder.h) following
// msprobe's per-value encoding (reference/msprobe-format.md, section 2.3) and
// pushes every tensor's bytes into this thread's ring.
//
// Errors: a bad config makes the constructor raise ValueError with the
// config's message. No other method raises: failures become a False return,
// a null value or a counter, so that tprobe never breaks training.
//
// Threading: every method is called with the GIL held; a large tensor copy
// into the ring runs with the GIL released. Tensor refs are numbered per OS
// thread (each thread has its own ring), and never reused on a thread, so
// tensors of an abandoned entry cannot be mistaken for a later entry's.

#include <dlfcn.h>
#include <pybind11/pybind11.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/core.h"
#include "client/entry_builder.h"
#include "client/naming.h"
#include "client/python/api_hook.h"
#include "client/python/call_stack.h"
#include "client/risk_level.h"
#include "client/session.h"
#include "common/dtype.h"
#include "common/record/record.h"
#include "common/record/writer.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

using client::kMaxDepth;
using client::Part;
using record::ValueWriter;
// Tensors at least this large are copied with the GIL released; below it the
// release costs more than the copy.
constexpr size_t kReleaseGilBytes = size_t{64} << 10;

// Python objects the encoder compares against, looked up on first use (so
// that importing tprobe._C imports no framework, and a MindSpore session
// never imports torch). Never freed: they live as long as the interpreter.
struct TorchTypes {
  PyObject* tensor = nullptr;         // torch.Tensor
  PyObject* size = nullptr;           // torch.Size
  PyObject* dtype = nullptr;          // torch.dtype
  PyObject* device = nullptr;         // torch.device
  PyObject* memory_format = nullptr;  // torch.memory_format
  PyObject* np_generic = nullptr;     // numpy.generic, if numpy imports
  PyObject* ms_tensor = nullptr;      // mindspore.Tensor
  PyObject* ms_dtype = nullptr;       // mindspore's dtype base (typing.Type)
  // torch.dtype or mindspore dtype object -> ring dtype; nullopt for dtypes
  // the ring lacks.
  std::unordered_map<PyObject*, std::optional<DType>> dtypes;
  // Called for values of any other type (see tprobe._C.set_fallback).
  PyObject* fallback = nullptr;
  bool ready = false;     // the torch types
  bool ms_ready = false;  // the mindspore types
};

TorchTypes& Types() {
  static TorchTypes* types = new TorchTypes();
  return *types;
}

// Interned attribute names.
struct Names {
  py::str dtype{"dtype"}, shape{"shape"}, requires_grad{"requires_grad"},
      is_cpu{"is_cpu"}, is_meta{"is_meta"}, detach{"detach"}, cpu{"cpu"},
      contiguous{"contiguous"}, is_contiguous{"is_contiguous"},
      data_ptr{"data_ptr"}, is_conj{"is_conj"}, resolve_conj{"resolve_conj"},
      fields{"_fields"}, type{"type"}, index{"index"}, item{"item"},
      asnumpy{"asnumpy"}, dataclass_fields{"__dataclass_fields__"};
};

Names& N() {
  static Names* names = new Names();
  return *names;
}

PyObject* Keep(py::object o) { return o.release().ptr(); }

PyObject* NumpyGeneric() {
  try {
    return Keep(py::module_::import("numpy").attr("generic"));
  } catch (py::error_already_set&) {
    return nullptr;
  }
}

// The MindSpore types, for a MindSpore session.
void InitMindSporeTypes() {
  TorchTypes& t = Types();
  if (t.ms_ready) return;
  py::module_ ms = py::module_::import("mindspore");
  t.ms_tensor = Keep(ms.attr("Tensor"));
  t.ms_dtype =
      Keep(py::module_::import("mindspore._c_expression.typing").attr("Type"));
  if (t.np_generic == nullptr) t.np_generic = NumpyGeneric();
  t.ms_ready = true;
}

void InitTypes(bool mindspore) {
  if (mindspore) {
    InitMindSporeTypes();
    return;
  }
  TorchTypes& t = Types();
  if (t.ready) return;
  py::module_ torch = py::module_::import("torch");
  auto keep = Keep;
  t.tensor = keep(torch.attr("Tensor"));
  t.size = keep(torch.attr("Size"));
  t.dtype = keep(torch.attr("dtype"));
  t.device = keep(torch.attr("device"));
  t.memory_format = keep(torch.attr("memory_format"));
  if (t.np_generic == nullptr) t.np_generic = NumpyGeneric();
  t.ready = true;
}

// The element count of a dense tensor of shape dims[0..ndim).
uint64_t Numel(const int64_t* dims, size_t ndim) {
  uint64_t numel = 1;
  for (size_t i = 0; i < ndim; ++i) numel *= static_cast<uint64_t>(dims[i]);
  return numel;
}

bool IsInstance(PyObject* obj, PyObject* type) {
  return type != nullptr &&
         PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(type));
}

class PySession;

// One open call, the handle that Session.*_begin returns and the matching
// *_end takes back: the session's plan of the call, kept as it is (its
// name made and interned once), and what the hooks ask of it.
struct Call : ApiCall {
  const PySession* owner = nullptr;
  bool open = true;  // *_end not yet called
};

// A value encoded ahead of its entry (Session.encode): an API's inputs must
// be captured before the API runs, since in-place APIs change them.
struct Encoded {
  std::string bytes;  // one value (record::ValueWriter)
};

std::string Str(py::handle h) { return py::str(h).cast<std::string>(); }

// Walks Python values into an entry's values, writing tensors on the way.
class Encoder {
 public:
  // `mindspore`: MindSpore's encodings (mindspore.Tensor, mindspore.dtype).
  Encoder(client::EntryBuilder& entry, bool mindspore)
      : entry_(entry), mindspore_(mindspore) {}

  // msprobe's encoding of `obj`; `key` is the dict key it sits under, if any.
  void Encode(py::handle obj, ValueWriter& out, int depth,
              std::string_view key = {}) {
    PyObject* o = obj.ptr();
    if (o == Py_None || depth > kMaxDepth) {
      out.Null();
      return;
    }
    if (PyList_Check(o) || (PyTuple_Check(o) && !IsInstance(o, Types().size))) {
      EncodeSequence(obj, out, depth);
      return;
    }
    // A dict that is also a dataclass (HuggingFace's ModelOutput) is a
    // dataclass to msprobe, which checks that first: every field in
    // declaration order, the unset ones null (the fallback, below).
    if (PyDict_Check(o) &&
        (PyDict_CheckExact(o) ||
         !py::hasattr(py::type::handle_of(obj), N().dataclass_fields))) {
      EncodeDict(obj, out, depth);
      return;
    }
    const size_t mark = out.buffer()->size();
    try {
      EncodeLeaf(obj, out, depth, key);
    } catch (const std::exception&) {  // py::error_already_set, cast_error
      out.buffer()->resize(mark);
      out.Null();  // an odd leaf is null, the rest is kept
    }
  }

  // A JSON-like value written as it is (the result of a fallback): str,
  // int, float, bool, None, lists and dicts; tensors become tensor refs.
  void EncodeRaw(py::handle obj, ValueWriter& out, int depth) {
    PyObject* o = obj.ptr();
    if (o == Py_None || depth > kMaxDepth) {
      out.Null();
    } else if (PyBool_Check(o)) {
      out.Bool(o == Py_True);
    } else if (PyLong_Check(o)) {
      SetInt(o, out);
    } else if (PyFloat_Check(o)) {
      out.Float(PyFloat_AS_DOUBLE(o));
    } else if (PyUnicode_Check(o)) {
      out.Str(obj.cast<std::string>());
    } else if (PyList_Check(o) || PyTuple_Check(o)) {
      out.BeginList();
      for (py::handle item : obj) EncodeRaw(item, out, depth + 1);
      out.End();
    } else if (PyDict_Check(o)) {
      out.BeginDict();
      for (auto [k, v] : py::reinterpret_borrow<py::dict>(obj)) {
        out.Key(KeyText(k));
        EncodeRaw(v, out, depth + 1);
      }
      out.End();
    } else if (IsInstance(o, Types().tensor)) {
      EncodeTensor(obj, out, depth);
    } else if (IsInstance(o, Types().ms_tensor)) {
      EncodeMsTensor(obj, out);
    } else {
      out.Null();
    }
  }

 private:
  void EncodeLeaf(py::handle obj, ValueWriter& out, int depth,
                  std::string_view key) {
    PyObject* o = obj.ptr();
    if (mindspore_) {
      EncodeMsLeaf(obj, out, depth, key);
    } else if (IsInstance(o, Types().tensor)) {
      EncodeTensor(obj, out, depth);
    } else if (key == "dtype" || key == "device") {
      EncodeKeyed(obj, out, key);
    } else if (IsBuiltin(o)) {
      EncodeBuiltin(obj, out, depth);
    } else if (IsInstance(o, Types().size)) {
      out.Typed("torch.Size");
      out.BeginList();
      for (py::handle d : obj) SetInt(d.ptr(), out);
      out.End();
    } else if (IsInstance(o, Types().dtype) || IsInstance(o, Types().device)) {
      out.BeginDict();  // positional dtype/device: msprobe writes {}
      out.End();
    } else if (IsInstance(o, Types().memory_format)) {
      std::string format = Str(obj);
      if (format.rfind("torch.", 0) == 0) format.erase(0, 6);
      out.BeginDict();
      out.Key("type");
      out.Str("torch.memory_format");
      out.Key("format");
      out.Str(format);
      out.End();
    } else if (IsInstance(o, Types().np_generic)) {
      EncodeBuiltin(obj, out, depth);
    } else {
      EncodeOther(obj, out, depth);
    }
  }

  // msprobe's MindSpore encoding (mindspore_processor.py): a value under
  // the key "dtype" and a positional number dtype are {"type":
  // "mindspore.dtype", "value": str(dtype)}; the rest as for PyTorch.
  void EncodeMsLeaf(py::handle obj, ValueWriter& out, int depth,
                    std::string_view key) {
    PyObject* o = obj.ptr();
    const bool builtin = IsBuiltin(o);
    if (key == "dtype" || (!builtin && IsInstance(o, Types().ms_dtype))) {
      const std::string text = Str(obj);
      out.Typed("mindspore.dtype");
      out.Str(text);
    } else if (IsInstance(o, Types().ms_tensor)) {
      EncodeMsTensor(obj, out);
    } else if (builtin || IsInstance(o, Types().np_generic)) {
      EncodeBuiltin(obj, out, depth);
    } else {
      EncodeOther(obj, out, depth);
    }
  }

  static bool IsBuiltin(PyObject* o) {
    return PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) ||
           PyUnicode_Check(o) || PySlice_Check(o) || o == Py_Ellipsis;
  }

  // bool, int, float, str, slice, Ellipsis and numpy scalars.
  void EncodeBuiltin(py::handle obj, ValueWriter& out, int depth) {
    PyObject* o = obj.ptr();
    if (PyBool_Check(o)) {
      out.Typed("bool");
      out.Bool(o == Py_True);
    } else if (PyLong_Check(o)) {
      out.Typed("int");
      SetInt(o, out);
    } else if (PyFloat_Check(o)) {
      out.Typed("float");
      out.Float(PyFloat_AS_DOUBLE(o));
    } else if (PyUnicode_Check(o)) {
      const std::string text = obj.cast<std::string>();
      out.Typed("str");
      out.Str(text);
    } else if (PySlice_Check(o)) {
      out.Typed("slice");
      out.BeginList();
      auto* s = reinterpret_cast<PySliceObject*>(o);
      for (PyObject* part : {s->start, s->stop, s->step}) {
        if (PyLong_Check(part) && !PyBool_Check(part)) {
          SetInt(part, out);
        } else {
          out.Null();
        }
      }
      out.End();
    } else if (o == Py_Ellipsis) {
      out.Typed("ellipsis");
      out.Str("...");
    } else {  // a numpy scalar
      const std::string type = Str(py::type::handle_of(obj).attr("__name__"));
      py::object item = obj.attr(N().item)();
      out.Typed(type);
      EncodeRaw(item, out, depth + 1);
    }
  }

  static void SetInt(PyObject* o, ValueWriter& out) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) {
      out.Float(PyLong_AsDouble(o));
    } else {
      out.Int(v);
    }
    PyErr_Clear();
  }

  static std::string KeyText(py::handle key) {
    if (PyUnicode_Check(key.ptr())) return key.cast<std::string>();
    return Str(key);
  }

  void EncodeSequence(py::handle obj, ValueWriter& out, int depth) {
    PyObject* o = obj.ptr();
    if (PyTuple_Check(o) && !PyTuple_CheckExact(o)) {
      py::handle type = py::type::handle_of(obj);
      if (py::hasattr(type, N().fields)) {  // a namedtuple: {field: value}
        py::tuple fields = type.attr(N().fields);
        const size_t n = std::min<size_t>(fields.size(), PyTuple_GET_SIZE(o));
        out.BeginDict();
        for (size_t i = 0; i < n; ++i) {
          std::string field = KeyText(fields[i]);
          out.Key(field);
          Encode(PyTuple_GET_ITEM(o, i), out, depth + 1, field);
        }
        out.End();
        return;
      }
    }
    out.BeginList();
    py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
    for (py::handle item : seq) Encode(item, out, depth + 1);
    out.End();
  }

  void EncodeDict(py::handle obj, ValueWriter& out, int depth) {
    out.BeginDict();
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(obj)) {
      std::string key = KeyText(k);
      out.Key(key);
      Encode(v, out, depth + 1, key);
    }
    out.End();
  }

  // A value under the dict key "dtype" or "device" (msprobe's
  // analyze_dtype_in_kwargs / analyze_device_in_kwargs).
  void EncodeKeyed(py::handle obj, ValueWriter& out, std::string_view key) {
    PyObject* o = obj.ptr();
    if (key == "dtype") {
      const std::string text = Str(obj);
      out.Typed("torch.dtype");
      out.Str(text);
      return;
    }
    if (IsInstance(o, Types().device)) {
      const std::string text =
          Str(obj.attr(N().type)) + ":" + Str(obj.attr(N().index));
      out.Typed("torch.device");
      out.Str(text);
    } else if (PyLong_Check(o) && !PyBool_Check(o)) {
      out.Typed("torch.device");
      SetInt(o, out);
    } else if (PyUnicode_Check(o)) {
      const std::string text = obj.cast<std::string>();
      out.Typed("torch.device");
      out.Str(text);
    } else {
      out.BeginDict();
      out.Key("type");
      out.Str("torch.device");
      out.End();
    }
  }

  // Types the C++ side does not know go to the Python fallback, which
  // returns None, ("raw", json_like) or ("value", python_value).
  void EncodeOther(py::handle obj, ValueWriter& out, int depth) {
    PyObject* fallback = Types().fallback;
    if (fallback == nullptr) {
      out.Null();
      return;
    }
    py::object result = py::reinterpret_borrow<py::object>(fallback)(obj);
    if (py::isinstance<py::tuple>(result) && py::len(result) == 2) {
      py::tuple pair = result;
      const std::string kind = pair[0].cast<std::string>();
      if (kind == "raw") {
        EncodeRaw(pair[1], out, depth + 1);
        return;
      }
      if (kind == "value") {
        Encode(pair[1], out, depth + 1);
        return;
      }
    }
    out.Null();
  }

  std::optional<DType> TensorDType(py::handle dtype) {
    auto& cache = Types().dtypes;
    auto it = cache.find(dtype.ptr());
    if (it != cache.end()) return it->second;
    const std::string name = Str(dtype);
    std::optional<DType> dt =
        mindspore_ ? DTypeFromMindSporeName(name) : DTypeFromTorchName(name);
    Py_INCREF(dtype.ptr());  // dtype objects are immortal in practice
    cache.emplace(dtype.ptr(), dt);
    return dt;
  }

  // A tensor whose dtype the ring lacks (float8), or without data of its
  // own (meta, FakeTensor, DTensor), goes to the Python fallback.
  void EncodeTensor(py::handle t, ValueWriter& out, int depth) {
    const Names& n = N();
    std::optional<DType> dtype = TensorDType(t.attr(n.dtype));
    // A CPU tensor is not a meta tensor: one lookup for the common case.
    const bool is_cpu = py::cast<bool>(t.attr(n.is_cpu));
    if (!dtype || (!is_cpu && py::cast<bool>(t.attr(n.is_meta)))) {
      EncodeOther(t, out, depth);
      return;
    }
    int64_t dims[record::kMaxDims];
    size_t ndim = 0;
    py::object shape = t.attr(n.shape);
    for (py::handle d : shape) {
      if (ndim == record::kMaxDims) {
        out.Null();
        return;
      }
      dims[ndim++] = PyLong_AsLongLong(d.ptr());
    }
    const bool requires_grad = py::cast<bool>(t.attr(n.requires_grad));
    py::object src = py::reinterpret_borrow<py::object>(t);
    if (!is_cpu) {
      src = src.attr(n.detach)().attr(n.cpu)();
    }
    if ((*dtype == DType::kComplex64 || *dtype == DType::kComplex128) &&
        py::cast<bool>(src.attr(n.is_conj)())) {
      src = src.attr(n.resolve_conj)();
    }
    if (!py::cast<bool>(src.attr(n.is_contiguous)())) {
      src = src.attr(n.detach)().attr(n.contiguous)();
    }
    const auto ptr = py::cast<uintptr_t>(src.attr(n.data_ptr)());
    const size_t nbytes = Numel(dims, ndim) * ElementSize(*dtype);
    if (ptr == 0 && nbytes != 0) {
      EncodeOther(t, out, depth);
      return;
    }
    const auto* data = reinterpret_cast<const void*>(ptr);
    const std::span<const int64_t> span(dims, ndim);
    if (nbytes >= kReleaseGilBytes) {
      py::gil_scoped_release release;
      entry_.Tensor(out, *dtype, span, requires_grad, data, nbytes);
    } else {
      entry_.Tensor(out, *dtype, span, requires_grad, data, nbytes);
    }
  }

  // A mindspore.Tensor: asnumpy() is the host copy MindSpore keeps for a
  // CPU tensor (no copy there; a device tensor is copied to the host), and
  // its buffer goes into the ring. msprobe writes no requires_grad for
  // MindSpore; the daemon leaves it out for a MindSpore producer.
  void EncodeMsTensor(py::handle t, ValueWriter& out) {
    const Names& n = N();
    std::optional<DType> dtype = TensorDType(t.attr(n.dtype));
    if (!dtype) {
      out.Null();
      return;
    }
    int64_t dims[record::kMaxDims];
    size_t ndim = 0;
    for (py::handle d : t.attr(n.shape)) {
      if (ndim == record::kMaxDims) {
        out.Null();
        return;
      }
      dims[ndim++] = PyLong_AsLongLong(d.ptr());
    }
    py::object array = t.attr(n.asnumpy)();
    Py_buffer view;
    if (PyObject_GetBuffer(array.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) {
      PyErr_Clear();
      out.Null();
      return;
    }
    const size_t nbytes = static_cast<size_t>(view.len);
    if (nbytes != Numel(dims, ndim) * ElementSize(*dtype)) {
      PyBuffer_Release(&view);
      out.Null();
      return;
    }
    const std::span<const int64_t> span(dims, ndim);
    if (nbytes >= kReleaseGilBytes) {
      py::gil_scoped_release release;
      entry_.Tensor(out, *dtype, span, false, view.buf, nbytes);
    } else {
      entry_.Tensor(out, *dtype, span, false, view.buf, nbytes);
    }
    PyBuffer_Release(&view);
  }

  client::EntryBuilder& entry_;
  bool mindspore_;
};

// Encodes `obj` into `out`, turning any Python error into null.
void SafeEncode(client::EntryBuilder& entry, py::handle obj, ValueWriter& out,
                bool mindspore) {
  const size_t mark = out.buffer()->size();
  try {
    InitTypes(mindspore);
    Encoder(entry, mindspore).Encode(obj, out, 0);
  } catch (...) {
    out.buffer()->resize(mark);
    out.Null();
  }
}

// The UTF-8 text of a str (no copy: CPython caches it), or false for any
// other object.
bool Text(py::handle obj, std::string_view* out) {
  if (!PyUnicode_Check(obj.ptr())) return false;
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(obj.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    return false;
  }
  *out = std::string_view(data, static_cast<size_t>(size));
  return true;
}

bool IsFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// tprobed beside this module when nothing names one: bin/tprobed inside the
// package (a wheel), or the build tree's bin/tprobed (python/tprobe/../../bin).
std::string DaemonBesideModule() {
  if (const char* env = std::getenv("TPROBED"); env && *env) return env;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&DaemonBesideModule), &info) == 0 ||
      info.dli_fname == nullptr) {
    return std::string();
  }
  std::string dir = info.dli_fname;
  dir = dir.substr(0, dir.rfind('/') + 1);
  for (const char* rel : {"bin/tprobed", "../../bin/tprobed"}) {
    const std::string candidate = dir + rel;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::string();
}

// The Python-facing session.
class PySession final : public ApiSession {
 public:
  PySession(const std::string& config_path, const std::string& dump_path,
            const std::string& socket_path, int rank, bool autostart_daemon,
            const std::string& daemon_path, int connect_timeout_ms,
            const std::string& framework)
      : mindspore_(framework == "mindspore") {
    if (framework != "pytorch" && framework != "mindspore") {
      throw py::value_error(
          "framework must be \"pytorch\" or \"mindspore\", not \"" + framework +
          "\"");
    }
    client::SessionOptions options;
    options.framework = framework;
    options.config_path = config_path;
    options.dump_path = dump_path;
    options.socket_path = socket_path;
    options.rank = rank;
    options.autostart_daemon = autostart_daemon;
    options.daemon_path = daemon_path.empty() && autostart_daemon
                              ? DaemonBesideModule()
                              : daemon_path;
    options.connect_timeout_ms = connect_timeout_ms;
    Result<std::unique_ptr<client::Session>> created =
        Status::Error("not created");
    {
      py::gil_scoped_release release;  // connecting may take a while
      created = client::Session::Create(options);
    }
    if (!created.ok()) throw py::value_error(created.status().message());
    session_ = std::move(created).value();
  }

  ~PySession() { Release(); }

  // Says goodbye to the daemon (bounded wait) and frees the session.
  void Close() {
    try {
      if (Py_IsInitialized() && !IsFinalizing()) {
        py::gil_scoped_release release;
        Release();
      } else {
        Release();
      }
    } catch (...) {
    }
  }

  void Start() {
    Guard([&] { session_->Start(); });
  }
  void Stop() {
    Guard([&] { session_->Stop(); });
  }
  void Step() {
    Guard([&] { session_->Step(); });
  }
  void SetStep(uint32_t step) {
    Guard([&] { session_->SetStep(step); });
  }
  void BeginGroup(const std::string& name) {
    Guard([&] { session_->BeginGroup(name); });
  }
  void EndGroup() {
    Guard([&] { session_->EndGroup(); });
  }

  bool collecting() const { return session_ && session_->collecting(); }
  bool connected() const { return session_ && session_->connected(); }
  int64_t step() const { return session_ ? session_->step() : 0; }
  int rank() const { return session_ ? session_->rank() : -1; }

  std::string level() const {
    return session_ ? std::string(config::LevelName(session_->config().level))
                    : std::string();
  }
  std::string task() const {
    return session_ ? std::string(config::TaskName(session_->config().task))
                    : std::string();
  }
  // max(step) of the config, or None when every step is dumped.
  py::object last_step() const {
    if (!session_) return py::none();
    auto last = config::LastStep(session_->config());
    return last ? py::object(py::int_(*last)) : py::object(py::none());
  }
  std::string dump_path() const {
    return session_ ? session_->config().dump_path : std::string();
  }
  py::list scope() const {
    return ToList(session_ ? session_->config().scope : config::Config().scope);
  }
  py::list name_list() const {
    return ToList(session_ ? session_->config().list : config::Config().list);
  }
  py::dict data_mode() const {
    py::dict d;
    const config::DataMode m =
        session_ ? session_->config().data_mode : config::DataMode();
    d["forward"] = m.forward;
    d["backward"] = m.backward;
    d["input"] = m.input;
    d["output"] = m.output;
    return d;
  }

  py::dict counters() const {
    py::dict d;
    uint64_t written = 0, no_daemon = 0, ring_full = 0, too_large = 0;
    try {
      if (session_) {
        client::Core& core = session_->core();
        written = core.records_written();
        no_daemon = core.dropped_no_daemon();
        ring_full = core.dropped(shm::DropReason::kRingFull);
        too_large = core.dropped(shm::DropReason::kTooLarge);
      }
    } catch (...) {
    }
    d["records_written"] = written;
    d["dropped_no_daemon"] = no_daemon;
    d["dropped_ring_full"] = ring_full;
    d["dropped_too_large"] = too_large;
    return d;
  }

  bool Flush(int timeout_ms) {
    if (!session_) return false;
    try {
      py::gil_scoped_release release;
      return session_->Flush(timeout_ms);
    } catch (...) {
      return false;
    }
  }

  // --- hooks -------------------------------------------------------------
  // The session names, counts and filters each call (client/session.h);
  // Python only hands over what its hooks saw. *_begin returns None when
  // nothing is recorded, else the call's handle (Call), which goes back
  // into the matching *_end; a handle is ended once.

  py::object ModuleBegin(py::handle base) {
    try {
      std::string_view text;
      client::CallPlan plan;
      if (!session_ || !Text(base, &text) ||
          !session_->BeginModule(text, true, 0, &plan)) {
        return py::none();
      }
      return Handle(std::move(plan));
    } catch (...) {
      return py::none();
    }
  }

  // A module call began (its forward pre-hook): lists its stack and writes
  // the input side of its entry (input_args, input_kwargs), as msprobe 26.x
  // does there.
  void ModuleInputs(py::handle handle, py::handle args, py::handle kwargs) {
    try {
      const Call* call = Open(handle);
      if (call == nullptr || !call->plan.stack()) return;
      const client::CallPlan& plan = call->plan;
      client::EntryBuilder entry(session_->core());
      if (plan.input) {
        SafeEncode(entry, args, entry.Whole(Part::kInputArgs), mindspore_);
        if (PyDict_Check(kwargs.ptr())) {
          SafeEncode(entry, kwargs, entry.Whole(Part::kInputKwargs),
                     mindspore_);
        } else {
          entry.Open(Part::kInputKwargs);
        }
      }
      // With an empty body the record only lists the stack.
      session_->WriteEntry(plan, CapturedStackId(), entry);
    } catch (...) {
    }
  }

  // The module call ended (its forward hook): writes the output side of its
  // entry (output, parameters) when scope, list and data_mode keep it, and
  // closes the call.
  void ModuleEnd(py::handle handle, py::handle output, py::handle parameters) {
    try {
      Call* call = Open(handle);
      if (call == nullptr) return;
      call->open = false;
      client::CallPlan& plan = call->plan;
      session_->CheckEnd(&plan);
      if (plan.output) {
        client::EntryBuilder entry(session_->core());
        EncodeOutput(entry, output, entry.Whole(Part::kOutput));
        ValueWriter& params = entry.Open(Part::kParameters);
        if (PyDict_Check(parameters.ptr())) {
          for (auto [k, v] : py::reinterpret_borrow<py::dict>(parameters)) {
            if (v.is_none()) continue;
            params.Key(py::str(k).cast<std::string>());
            SafeEncode(entry, v, params, mindspore_);
          }
        }
        session_->WriteEntry(plan, 0, entry);
      }
      session_->EndCall(plan);
    } catch (...) {
    }
  }

  // A module's backward begins (its output gradients arrived): returns its
  // handle, None when it is not recorded (else module_backward_end must
  // follow).
  py::object ModuleBackwardBegin(py::handle base, int64_t index) {
    try {
      std::string_view text;
      client::CallPlan plan;
      if (!session_ || !Text(base, &text) ||
          !session_->BeginModule(text, false, static_cast<uint32_t>(index),
                                 &plan)) {
        return py::none();
      }
      return Handle(std::move(plan));
    } catch (...) {
      return py::none();
    }
  }

  // The module's backward is done: writes its entry and closes it.
  void ModuleBackwardEnd(py::handle handle, py::handle input,
                         py::handle output) {
    try {
      Call* call = Open(handle);
      if (call == nullptr) return;
      call->open = false;
      session_->CheckEnd(&call->plan);
      WriteBackward(call->plan, input, output);
      session_->EndCall(call->plan);
    } catch (...) {
    }
  }

  py::object ApiBegin(py::handle base) {
    try {
      std::string_view text;
      Call call;
      if (!Text(base, &text) || !BeginApiCall(text, &call)) return py::none();
      call.owner = this;
      return py::cast(std::move(call));
    } catch (...) {
      return py::none();
    }
  }

  bool BeginApiCall(std::string_view base, ApiCall* call) override {
    try {
      client::CallPlan plan;
      if (!session_ || !session_->BeginApi(base, true, 0, &plan)) return false;
      Plan(std::move(plan), call);
      return true;
    } catch (...) {
      return false;
    }
  }

  // An API call is about to run: takes its stack and, when data_mode keeps
  // them, its inputs into the call.
  void ApiInputs(py::handle handle, py::handle args, py::handle kwargs) {
    Call* call = Open(handle);
    if (call != nullptr) TakeApiInputs(*call, args.ptr(), kwargs.ptr());
  }

  void TakeApiInputs(ApiCall& call, PyObject* args, PyObject* kwargs) override {
    try {
      if (!session_ || !call.entry) return;
      call.stack_id = CapturedStackId();
      if (call.plan.input) {
        EncodeAhead(args, &call.args);
        EncodeAhead(kwargs, &call.kwargs);
        call.inputs = true;
      }
    } catch (...) {
    }
  }

  void ApiEnd(py::handle handle, py::handle output) {
    Call* call = Open(handle);
    if (call == nullptr) return;
    call->open = false;
    EndApiCall(*call, output.is(NoEntry()) ? nullptr : output.ptr());
  }

  void EndApiCall(ApiCall& call, PyObject* output) override {
    try {
      if (!session_) return;
      client::CallPlan& plan = call.plan;
      session_->CheckEnd(&plan);
      if (output != nullptr) {
        client::EntryBuilder entry(session_->core());
        if (plan.entry()) {
          if (plan.input && call.inputs) {
            entry.Whole(Part::kInputArgs).Raw(call.args);
            entry.Whole(Part::kInputKwargs).Raw(call.kwargs);
          } else if (plan.input) {
            entry.Whole(Part::kInputArgs).Null();
            entry.Whole(Part::kInputKwargs).Null();
          }
          if (plan.output) {
            EncodeOutput(entry, output, entry.Whole(Part::kOutput));
          }
        }
        // An empty entry lists only the stack (data_mode keeps none of it).
        if (plan.entry() || plan.stack())
          session_->WriteEntry(plan, call.stack_id, entry);
      }
      session_->EndCall(plan);
    } catch (...) {
    }
  }

  void ApiCallBackward(PyObject* base, int64_t index, PyObject* input,
                       PyObject* output) override {
    ApiBackward(base, index, input, output);
  }

  void ApiBackward(py::handle base, int64_t index, py::handle input,
                   py::handle output) {
    try {
      std::string_view text;
      client::CallPlan plan;
      if (!session_ || !Text(base, &text) ||
          !session_->BeginApi(text, false, static_cast<uint32_t>(index),
                              &plan)) {
        return;
      }
      WriteBackward(plan, input, output);
      session_->EndCall(plan);
    } catch (...) {
    }
  }

  bool ParamGrad(py::handle base, py::handle name, py::handle grad) {
    try {
      std::string_view text, param;
      client::CallPlan plan;
      if (!session_ || !Text(base, &text) || !Text(name, &param) ||
          !session_->BeginParamGrad(text, param, &plan)) {
        return false;
      }
      client::EntryBuilder entry(session_->core());
      ValueWriter& body = entry.Extra();
      body.Key(param);
      body.BeginList();
      SafeEncode(entry, grad, body, mindspore_);
      body.End();
      return session_->WriteEntry(plan, 0, entry);
    } catch (...) {
      return false;
    }
  }

  Encoded Encode(py::handle value) {
    Encoded e;
    EncodeAhead(value, &e.bytes);
    return e;
  }

  // A raw entry: `name` as given, no naming, filters or construct records.
  // For tests of the value encoding.
  bool RecordEntry(py::handle name, py::handle stack, py::handle body,
                   int64_t step) {
    try {
      if (!session_) return false;
      client::Core& core = session_->core();
      client::EntryBuilder entry(core);
      if (!core.attached()) return entry.Write(0, 0, 0);  // counts the drop
      std::string_view text;
      if (!Text(name, &text) || !PyDict_Check(body.ptr())) return false;
      ValueWriter& items = entry.Extra();
      for (auto [k, v] : py::reinterpret_borrow<py::dict>(body)) {
        items.Key(py::str(k).cast<std::string>());
        if (PyBool_Check(v.ptr())) {
          items.Bool(v.ptr() == Py_True);  // is_recompute
        } else {
          TakeOrEncode(entry, v, items);
        }
      }
      const uint32_t name_id = core.Intern(record::InternKind::kName, text);
      const uint32_t step_no =
          step >= 0 ? static_cast<uint32_t>(step) : session_->step();
      return entry.Write(step_no, name_id, StackId(stack));
    } catch (...) {
      return false;
    }
  }

  // The marker api_end takes as `output` when the API raised: the call is
  // closed without an entry.
  static py::handle NoEntry() {
    static PyObject* marker =
        PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
    return marker;
  }

 private:
  // `value` encoded into `bytes` ahead of its entry (its tensors are pushed
  // now); null when no daemon is attached.
  void EncodeAhead(py::handle value, std::string* bytes) {
    ValueWriter out(bytes);
    if (!session_ || !session_->core().attached()) {
      out.Null();
      return;
    }
    client::EntryBuilder entry(session_->core());
    SafeEncode(entry, value, out, mindspore_);
  }

  // The running code's stack, interned in this thread's ring (0: none).
  uint32_t CapturedStackId() {
    std::shared_ptr<const Stack> stack = CaptureStack();
    return stack ? stack->text.Intern(session_->core()) : 0;
  }

  // The handle of a call the session opened.
  py::object Handle(client::CallPlan&& plan) const {
    Call call;
    call.owner = this;
    Plan(std::move(plan), &call);
    return py::cast(std::move(call));
  }

  // What the hooks ask of a call the session opened with `plan`.
  void Plan(client::CallPlan&& plan, ApiCall* call) const {
    call->entry = plan.entry() || plan.stack();
    call->input = plan.input;
    call->backward = session_->WantsBackward();
    call->plan = std::move(plan);
  }

  // The open call behind `handle`, when this session opened it; null for
  // None, a foreign object or a call already ended.
  Call* Open(py::handle handle) const {
    if (!session_ || !py::isinstance<Call>(handle)) return nullptr;
    Call& call = handle.cast<Call&>();
    return call.open && call.owner == this ? &call : nullptr;
  }

  // A backward entry: input = gradients of the forward outputs, output =
  // gradients of the forward inputs. A side passed as NoEntry() is left
  // out: the daemon merges the entries of one name, so the two sides may
  // come in separate calls.
  void WriteBackward(const client::CallPlan& plan, py::handle input,
                     py::handle output) {
    if (!plan.entry()) return;
    client::EntryBuilder entry(session_->core());
    if (plan.input && !input.is(NoEntry())) {
      SafeEncode(entry, input, entry.Whole(Part::kInput), mindspore_);
    }
    if (plan.output && !output.is(NoEntry())) {
      SafeEncode(entry, output, entry.Whole(Part::kOutput), mindspore_);
    }
    if (entry.empty()) return;
    session_->WriteEntry(plan, 0, entry);
  }

  // msprobe's output list: a list or tuple as it is, anything else as [x].
  void EncodeOutput(client::EntryBuilder& entry, py::handle output,
                    ValueWriter& out) {
    if (PyList_Check(output.ptr()) || PyTuple_Check(output.ptr())) {
      SafeEncode(entry, output, out, mindspore_);
    } else {
      out.BeginList();
      SafeEncode(entry, output, out, mindspore_);
      out.End();
    }
  }

  // An Encoded value is copied in; anything else is encoded now.
  void TakeOrEncode(client::EntryBuilder& entry, py::handle value,
                    ValueWriter& out) {
    if (py::isinstance<Encoded>(value)) {
      out.Raw(value.cast<Encoded&>().bytes);
    } else {
      SafeEncode(entry, value, out, mindspore_);
    }
  }

  // A stack given as a list of lines (record_entry).
  uint32_t StackId(py::handle stack) {
    if (stack.is_none()) return 0;
    client::StackText text;
    for (py::handle line : stack) {
      std::string_view view;
      if (Text(line, &view)) {
        text.Add(view);
      } else {
        text.Add(line.cast<std::string>());
      }
    }
    return text.Intern(session_->core());
  }

  static py::list ToList(const std::vector<std::string>& v) {
    py::list l;
    for (const auto& s : v) l.append(s);
    return l;
  }

  template <typename F>
  void Guard(F&& f) {
    try {
      if (session_) f();
    } catch (...) {
    }
  }

  void Release() {
    if (!session_) return;
    if (client::InForkedChild()) {
      // The parent's control thread does not exist here: never wait on it.
      (void)session_.release();
      return;
    }
    session_.reset();
  }

  std::unique_ptr<client::Session> session_;
  // A MindSpore session: MindSpore's value encodings, and msprobe's
  // MindSpore entry keys (no is_recompute).
  const bool mindspore_;
};

// The ApiSession of a tprobe._C.Session object (api_hook.h).
ApiSession* ApiSessionOf(PyObject* object) {
  try {
    py::handle h(object);
    if (!py::isinstance<PySession>(h)) return nullptr;
    return &h.cast<PySession&>();
  } catch (...) {
    PyErr_Clear();
    return nullptr;
  }
}

}  // namespace
}  // namespace tprobe::python

PYBIND11_MODULE(_C, m) {
  using tprobe::python::Encoded;
  using tprobe::python::PySession;
  using tprobe::python::Types;
  m.doc() = "tprobe's client core: sessions that push hook data to tprobed";

  py::class_<Encoded>(m, "Encoded",
                      "A value encoded ahead of its entry (Session.encode).");

  tprobe::python::DefineApiHook(m, &tprobe::python::ApiSessionOf);

  m.def("set_own_frames", &tprobe::python::SetOwnFrames, py::arg("dir"),
        "Frames of files under dir are tprobe's own: the stacks of the "
        "entries leave them out.");

  using tprobe::python::Call;
  py::class_<Call>(m, "Call",
                   "One open call (Session.*_begin): handed back to the "
                   "matching *_end, which ends it once.")
      .def_readonly("entry", &Call::entry,
                    "Pass the call's stack and data to *_inputs / *_end.")
      .def_readonly("input", &Call::input, "data_mode keeps the inputs.")
      .def_readonly("backward", &Call::backward, "Report the call's backward.")
      .def_property_readonly(
          "index", [](const Call& c) { return c.plan.index; },
          "N in the call's name (its backward's too).");

  m.def(
      "set_fallback",
      [](py::object fn) {
        PyObject*& slot = Types().fallback;
        Py_XDECREF(slot);
        slot = fn.is_none() ? nullptr : fn.release().ptr();
      },
      py::arg("fn"),
      "Sets the callable that encodes values of types the binding does not "
      "know: it returns None, ('raw', json_like) or ('value', python_value).");

  m.def(
      "api_risk",
      [](const std::string& api) {
        switch (tprobe::client::RiskOfApi(api)) {
          case tprobe::client::ApiRisk::kCore:
            return "CORE";
          case tprobe::client::ApiRisk::kLow:
            return "LOW";
          case tprobe::client::ApiRisk::kFocus:
            break;
        }
        return "FOCUS";
      },
      py::arg("api"),
      "msprobe 26.x's risk of an API name without its group prefix: "
      "\"CORE\", \"FOCUS\" or \"LOW\" (risk_level).");

  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string&, const std::string&, const std::string&,
                    int, bool, const std::string&, int, const std::string&>(),
           py::arg("config_path") = "", py::arg("dump_path") = "",
           py::arg("socket_path") = "", py::arg("rank") = -1,
           py::arg("autostart_daemon") = true, py::arg("daemon_path") = "",
           py::arg("connect_timeout_ms") = 5000,
           py::arg("framework") = "pytorch")
      .def("close", &PySession::Close)
      .def("start", &PySession::Start)
      .def("stop", &PySession::Stop)
      .def("step", &PySession::Step)
      .def("set_step", &PySession::SetStep, py::arg("step"),
           "Makes step the current step number (msprobe's set_init_step).")
      .def("begin_group", &PySession::BeginGroup, py::arg("name"),
           "Level mix: the calls until end_group() are inside the construct "
           "node `name` (msprobe's \"optimizer\", \"clip_grad\").")
      .def("end_group", &PySession::EndGroup)
      .def_property_readonly("collecting", &PySession::collecting)
      .def_property_readonly("connected", &PySession::connected)
      .def_property_readonly("current_step", &PySession::step)
      .def_property_readonly("rank", &PySession::rank)
      .def_property_readonly("level", &PySession::level)
      .def_property_readonly("task", &PySession::task)
      .def_property_readonly("dump_path", &PySession::dump_path)
      .def_property_readonly("last_step", &PySession::last_step,
                             "max(step) of the config; None: every step")
      .def_property_readonly("scope", &PySession::scope)
      .def_property_readonly("list", &PySession::name_list)
      .def_property_readonly("data_mode", &PySession::data_mode)
      .def("counters", &PySession::counters)
      .def("flush", &PySession::Flush, py::arg("timeout_ms") = 10000)
      .def_static(
          "module_base",
          [](const std::string& path, const std::string& cls, bool cell) {
            return tprobe::client::ModuleBase(
                cell ? tprobe::client::ModuleStyle::kCell
                     : tprobe::client::ModuleStyle::kModule,
                path, cls);
          },
          py::arg("path"), py::arg("cls"), py::arg("cell") = false,
          "'Module.{path}.{cls}' (or 'Cell.…'): the name base of a module.")
      .def_static(
          "api_base",
          [](const std::string& prefix, const std::string& api) {
            return tprobe::client::ApiBase(prefix, api);
          },
          py::arg("prefix"), py::arg("api"),
          "'{prefix}.{last dotted part of api}': the name base of an API.")
      .def("module_begin", &PySession::ModuleBegin, py::arg("base"),
           "Opens a module forward call; returns its Call (None: not "
           "recorded, else module_end must follow).")
      .def("module_inputs", &PySession::ModuleInputs, py::arg("call"),
           py::arg("args"), py::arg("kwargs"),
           "Lists the beginning module call's stack (the running code's) "
           "and writes its inputs (if data_mode keeps them).")
      .def("module_end", &PySession::ModuleEnd, py::arg("call"),
           py::arg("output"), py::arg("parameters"),
           "Writes the module call's outputs (if scope, list and data_mode "
           "keep them) and closes it.")
      .def("api_begin", &PySession::ApiBegin, py::arg("base"),
           "Opens an outermost API forward call; returns its Call (None: "
           "not recorded, else api_end must follow on this thread).")
      .def("api_inputs", &PySession::ApiInputs, py::arg("call"),
           py::arg("args"), py::arg("kwargs"),
           "Before the API runs: takes its stack (the running code's) and, "
           "if data_mode keeps them, its inputs into the call.")
      .def("api_end", &PySession::ApiEnd, py::arg("call"),
           py::arg("output") = PySession::NoEntry(),
           "Writes the API call's entry (unless `output` is left out) and "
           "closes it.")
      .def("module_backward_begin", &PySession::ModuleBackwardBegin,
           py::arg("base"), py::arg("index"),
           "Opens the backward of forward call `index` of a module; returns "
           "its Call (None: not recorded, else module_backward_end must "
           "follow).")
      .def("module_backward_end", &PySession::ModuleBackwardEnd,
           py::arg("call"), py::arg("input") = PySession::NoEntry(),
           py::arg("output") = PySession::NoEntry(),
           "Writes the module backward's entry and closes it.")
      .def("api_backward", &PySession::ApiBackward, py::arg("base"),
           py::arg("index"), py::arg("input") = PySession::NoEntry(),
           py::arg("output") = PySession::NoEntry(),
           "Records the backward of forward call `index` of an API; a side "
           "left out is not written (the entry's other calls add it).")
      .def("param_grad", &PySession::ParamGrad, py::arg("base"),
           py::arg("name"), py::arg("grad"),
           "Records a parameter gradient of the module `base`.")
      .def("encode", &PySession::Encode, py::arg("value"))
      .def("record_entry", &PySession::RecordEntry, py::arg("name"),
           py::arg("stack"), py::arg("body"), py::arg("step") = -1);
}
