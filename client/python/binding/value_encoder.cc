// msprobe's encoding of Python values into an entry's value stream
// (value_encoder.h).

#include "client/python/binding/value_encoder.h"

#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/python/binding/hook_guard.h"
#include "client/python/binding/producer_stats.h"
#include "client/python/binding/py_compat.h"
#include "client/python/binding/strided_copy.h"
#include "client/python/binding/tensor_shim.h"
#include "common/dtype.h"
#include "common/record/record.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

using client::kMaxDepth;
using record::ValueWriter;
// Tensors at least this large are copied with the GIL released; below it the
// release costs more than the copy.
constexpr size_t kReleaseGilBytes = size_t{64} << 10;
// A strided CPU tensor whose strides the shim read and whose data is at most
// this large is gathered here (strided_copy.h); a larger one is copied by
// torch's contiguous(), whose cost is then the copy's.
constexpr size_t kGatherBytes = kReleaseGilBytes;

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

// The element count of a dense tensor of shape dims[0..ndim).
uint64_t Numel(const int64_t* dims, size_t ndim) {
  uint64_t numel = 1;
  for (size_t i = 0; i < ndim; ++i) numel *= static_cast<uint64_t>(dims[i]);
  return numel;
}

std::string Str(py::handle h) { return py::str(h).cast<std::string>(); }

// A tensor's dtype and shape as the ring takes them.
struct TensorShape {
  // dims is left unset (only the first ndim are read): zeroing its
  // kMaxDims words cost about 70 instructions a tensor.
  explicit TensorShape(DType d) : dtype(d) {}

  DType dtype;
  int64_t dims[record::kMaxDims];
  size_t ndim = 0;

  std::span<const int64_t> span() const { return {dims, ndim}; }
  size_t nbytes() const { return Numel(dims, ndim) * ElementSize(dtype); }
};

// `shape`'s dimensions (a torch.Size or a tuple of ints) into out->dims;
// false when there are more than the ring takes.
bool ReadShape(PyObject* shape, TensorShape* out) {
  if (PyTuple_Check(shape)) {  // torch.Size is a tuple: no iterator
    const Py_ssize_t n = PyTuple_GET_SIZE(shape);
    if (n > static_cast<Py_ssize_t>(record::kMaxDims)) return false;
    for (Py_ssize_t i = 0; i < n; ++i) {
      out->dims[out->ndim++] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    }
    return true;
  }
  for (py::handle d : py::reinterpret_borrow<py::object>(shape)) {
    if (out->ndim == record::kMaxDims) return false;
    out->dims[out->ndim++] = PyLong_AsLongLong(d.ptr());
  }
  return true;
}

// A tensor's data as a contiguous host tensor: a device tensor copied to
// the host, a conjugate view resolved.
py::object HostContiguous(py::handle t, DType dtype, bool is_cpu) {
  const Names& n = N();
  py::object src = py::reinterpret_borrow<py::object>(t);
  if (!is_cpu) src = src.attr(n.detach)().attr(n.cpu)();
  if ((dtype == DType::kComplex64 || dtype == DType::kComplex128) &&
      py::cast<bool>(src.attr(n.is_conj)())) {
    src = src.attr(n.resolve_conj)();
  }
  if (!py::cast<bool>(src.attr(n.is_contiguous)())) {
    src = src.attr(n.detach)().attr(n.contiguous)();
  }
  return src;
}

// The attributes EncodeTensor reads, each read the way `getattr` would but
// without its lookup: for a tensor type with the default attribute lookup,
// the getter of a getset descriptor (`t.dtype`) is called directly, and a
// method descriptor (`t.data_ptr()`) is called with the tensor as its first
// argument, making no bound method. Found once per type (and again when the
// type changes); an attribute that is anything else (a subclass's property,
// a type with its own __getattribute__) is read through getattr. The binding
// does not link libtorch, so these calls are the cheapest way in.
class TensorReads {
 public:
  enum Attr {
    kDType,
    kShape,
    kIsCpu,
    kRequiresGrad,
    kIsContiguous,
    kDataPtr,
    kAttrs
  };

  // `t.<attr>`, or `t.<attr>()` for the methods (is_contiguous, data_ptr):
  // a new reference, or null with an error set.
  PyObject* Read(PyObject* t, Attr attr) {
    const Slot& slot = For(Py_TYPE(t)).slots[attr];
    if (slot.getset != nullptr) {
      return slot.getset->get(t, slot.getset->closure);
    }
    if (slot.method != nullptr) {
      return PyObject_Vectorcall(slot.method, &t, 1, nullptr);
    }
    PyObject* value = PyObject_GetAttr(t, Name(attr));
    if (value == nullptr || attr < kIsContiguous) return value;
    PyObject* result = PyObject_CallNoArgs(value);
    Py_DECREF(value);
    return result;
  }

  // Read's value, as a new py::object; raises error_already_set on failure.
  py::object Get(py::handle t, Attr attr) {
    PyObject* value = Read(t.ptr(), attr);
    if (value == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(value);
  }

  // Read's value as a bool (its truth); raises on failure.
  bool Flag(py::handle t, Attr attr) {
    py::object value = Get(t, attr);
    if (value.ptr() == Py_True) return true;
    if (value.ptr() == Py_False) return false;
    const int truth = PyObject_IsTrue(value.ptr());
    if (truth < 0) throw py::error_already_set();
    return truth == 1;
  }

 private:
  struct Slot {
    PyGetSetDef* getset = nullptr;  // call its getter
    PyObject* method = nullptr;     // a method descriptor, held
  };
  struct TypeSlots {
    PyTypeObject* type = nullptr;
    unsigned int version = 0;  // the type's tp_version_tag when found
    Slot slots[kAttrs];
  };
  // A process sees a tensor type or two (torch.Tensor, Parameter); when
  // more come, the oldest are dropped.
  static constexpr size_t kMaxTypes = 8;

  static PyObject* Name(Attr attr) {
    const Names& n = N();
    const py::str* names[kAttrs] = {&n.dtype,         &n.shape,
                                    &n.is_cpu,        &n.requires_grad,
                                    &n.is_contiguous, &n.data_ptr};
    return names[attr]->ptr();
  }

  const TypeSlots& For(PyTypeObject* type) {
    for (TypeSlots& known : types_) {
      if (known.type == type) {
        if (known.version != 0 && known.version == type->tp_version_tag) {
          return known;
        }
        Find(&known);
        return known;
      }
    }
    if (types_.size() == kMaxTypes) {
      Forget(&types_.front());
      types_.erase(types_.begin());
    }
    types_.emplace_back();
    types_.back().type = type;
    Find(&types_.back());
    return types_.back();
  }

  // The slots of `known.type`, as the default attribute lookup finds them.
  static void Find(TypeSlots* known) {
    Forget(known);
    PyTypeObject* type = known->type;
    if (type->tp_getattro != PyObject_GenericGetAttr) return;
    for (int a = 0; a < kAttrs; ++a) {
      // Borrowed; sets the type's version tag.
      PyObject* descr = _PyType_Lookup(type, Name(static_cast<Attr>(a)));
      if (descr == nullptr) continue;
      Slot& slot = known->slots[a];
      if (a < kIsContiguous && Py_IS_TYPE(descr, &PyGetSetDescr_Type)) {
        PyGetSetDef* def =
            reinterpret_cast<PyGetSetDescrObject*>(descr)->d_getset;
        if (def->get != nullptr) slot.getset = def;
      } else if (a >= kIsContiguous && Py_IS_TYPE(descr, &PyMethodDescr_Type)) {
        slot.method = Py_NewRef(descr);
      }
    }
    known->version = type->tp_version_tag;
  }

  static void Forget(TypeSlots* known) {
    for (Slot& slot : known->slots) {
      Py_CLEAR(slot.method);
      slot.getset = nullptr;
    }
    known->version = 0;
  }

  std::vector<TypeSlots> types_;
};

TensorReads& Reads() {
  static TensorReads* reads = new TensorReads();  // needs the GIL
  return *reads;
}

// Walks Python values into an entry's values, writing tensors on the way.
class Encoder {
 public:
  // kMindSpore: MindSpore's encodings (mindspore.Tensor, mindspore.dtype).
  Encoder(client::EntryBuilder& entry, ValueEncoding encoding)
      : entry_(entry), encoding_(encoding) {}

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

  // EncodeSequence of a tuple of `items`: a list.
  void EncodeItems(PyObject* const* items, Py_ssize_t n, ValueWriter& out) {
    out.BeginList();
    for (Py_ssize_t i = 0; i < n; ++i) Encode(items[i], out, 1);
    out.End();
  }

  // EncodeDict of a dict of `names` (a tuple of str, or null) and their
  // `values`.
  void EncodeNamed(PyObject* const* values, PyObject* names, ValueWriter& out) {
    out.BeginDict();
    const Py_ssize_t n = names != nullptr ? PyTuple_GET_SIZE(names) : 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
      std::string key = KeyText(PyTuple_GET_ITEM(names, i));
      out.Key(key);
      Encode(values[i], out, 1, key);
    }
    out.End();
  }

 private:
  void EncodeLeaf(py::handle obj, ValueWriter& out, int depth,
                  std::string_view key) {
    PyObject* o = obj.ptr();
    if (encoding_ == ValueEncoding::kMindSpore) {
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
    std::optional<DType> dt = encoding_ == ValueEncoding::kMindSpore
                                  ? DTypeFromMindSporeName(name)
                                  : DTypeFromTorchName(name);
    Py_INCREF(dtype.ptr());  // dtype objects are immortal in practice
    cache.emplace(dtype.ptr(), dt);
    return dt;
  }

  // A tensor whose dtype the ring lacks (float8), or without data of its
  // own (meta, FakeTensor, DTensor), goes to the Python fallback. A plain
  // tensor is read through torch's C shim where it is on (tensor_shim.h),
  // else through its Python attributes.
  void EncodeTensor(py::handle t, ValueWriter& out, int depth) {
    TensorFacts facts;
    if (ReadTensorFacts(t.ptr(), &facts)) {
      TensorShape shape{facts.dtype};
      if (facts.sizes.size() > record::kMaxDims) {
        out.Null();
        return;
      }
      for (int64_t d : facts.sizes) shape.dims[shape.ndim++] = d;
      EncodeRead(
          t, shape, facts.strides, facts.is_cpu, out, depth,
          [&] { return facts.contiguous(); }, [&] { return facts.data; });
      return;
    }
    TensorReads& reads = Reads();
    std::optional<DType> dtype = TensorDType(reads.Get(t, TensorReads::kDType));
    // A CPU tensor is not a meta tensor: one lookup for the common case.
    const bool is_cpu = reads.Flag(t, TensorReads::kIsCpu);
    if (!dtype || (!is_cpu && py::cast<bool>(t.attr(N().is_meta)))) {
      EncodeOther(t, out, depth);
      return;
    }
    TensorShape shape{*dtype};
    if (!ReadShape(reads.Get(t, TensorReads::kShape).ptr(), &shape)) {
      out.Null();
      return;
    }
    EncodeRead(
        t, shape, {}, is_cpu, out, depth,
        [&] { return reads.Flag(t, TensorReads::kIsContiguous); },
        [&] { return PythonDataOf(t); });
  }

  // The rest of EncodeTensor, once the dtype, device and shape of `t` are
  // read (and its strides, through the shim; empty through Python):
  // `contiguous()` and `data()` read those of t itself, when needed.
  template <typename Contiguous, typename Data>
  void EncodeRead(py::handle t, const TensorShape& shape,
                  std::span<const int64_t> strides, bool is_cpu,
                  ValueWriter& out, int depth, Contiguous contiguous,
                  Data data) {
    const bool requires_grad = Reads().Flag(t, TensorReads::kRequiresGrad);
    const size_t nbytes = shape.nbytes();
    if (nbytes != 0 && ProducerComputes(is_cpu)) {
      // Reduced by torch on the tensor's device, never copied here.
      EncodeByProducer(entry_, t, shape.dtype, shape.span(), requires_grad,
                       nbytes, out);
      return;
    }
    // The common case, a contiguous CPU tensor that is not complex, is its
    // own host copy. A tensor of at most one element is contiguous whatever
    // its strides (torch skips the dimensions of size 1): no
    // is_contiguous() call, which goes through torch's argument parser.
    const bool host_real = is_cpu && shape.dtype != DType::kComplex64 &&
                           shape.dtype != DType::kComplex128;
    const bool own =
        host_real && (Numel(shape.dims, shape.ndim) <= 1 || contiguous());
    const void* ptr = own ? data() : nullptr;
    // A small strided one is gathered into this thread's scratch.
    if (!own && host_real && !strides.empty() && nbytes <= kGatherBytes &&
        (ptr = data()) != nullptr) {
      static thread_local std::vector<std::byte> scratch;
      scratch.resize(std::max(scratch.size(), nbytes));
      CopyStrided(static_cast<const std::byte*>(ptr), shape.span(), strides,
                  ElementSize(shape.dtype), scratch.data());
      ptr = scratch.data();
    }
    // Else a copy made here, which lives until its bytes are pushed.
    py::object copy;
    if (!own && ptr == nullptr) {
      copy = HostContiguous(t, shape.dtype, is_cpu);
      ptr = DataOf(copy);
    }
    if (ptr == nullptr && nbytes != 0) {
      EncodeOther(t, out, depth);
      return;
    }
    Push(out, shape, requires_grad, ptr, nbytes);
  }

  // The address of `t`'s first element (its data_ptr()), through the shim
  // where it reads t, else through Python.
  static const void* DataOf(py::handle t) {
    TensorFacts facts;
    if (ReadTensorFacts(t.ptr(), &facts)) return facts.data;
    return PythonDataOf(t);
  }

  static const void* PythonDataOf(py::handle t) {
    const auto ptr = py::cast<uintptr_t>(Reads().Get(t, TensorReads::kDataPtr));
    return reinterpret_cast<const void*>(ptr);
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
    TensorShape shape{*dtype};
    if (!ReadShape(t.attr(n.shape).ptr(), &shape)) {
      out.Null();
      return;
    }
    const size_t numel_bytes = shape.nbytes();
    if (numel_bytes != 0 && ProducerComputes(TensorsOnHost())) {
      // Reduced by MindSpore's ops where the tensor lives, no asnumpy().
      EncodeByProducer(entry_, t, *dtype, shape.span(), false, numel_bytes,
                       out);
      return;
    }
    py::object array = t.attr(n.asnumpy)();
    Py_buffer view;
    if (PyObject_GetBuffer(array.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) {
      PyErr_Clear();
      out.Null();
      return;
    }
    const size_t nbytes = static_cast<size_t>(view.len);
    if (nbytes != numel_bytes) {
      out.Null();
    } else {
      Push(out, shape, false, view.buf, nbytes);
    }
    PyBuffer_Release(&view);
  }

  // A tensor's bytes pushed through the entry; a large copy runs with the
  // GIL released.
  void Push(ValueWriter& out, const TensorShape& shape, bool requires_grad,
            const void* data, size_t nbytes) {
    if (nbytes >= kReleaseGilBytes) {
      py::gil_scoped_release release;
      entry_.Tensor(out, shape.dtype, shape.span(), requires_grad, data,
                    nbytes);
    } else {
      entry_.Tensor(out, shape.dtype, shape.span(), requires_grad, data,
                    nbytes);
    }
  }

  client::EntryBuilder& entry_;
  const ValueEncoding encoding_;
};

}  // namespace

namespace {

// `encode(encoder)` writes one value into `out`; when it fails as a whole
// (the framework does not import, say) the value is null and the failure is
// counted in `failures`.
template <typename Write>
void Guarded(client::EntryBuilder& entry, ValueWriter& out,
             ValueEncoding encoding, std::atomic<uint64_t>& failures,
             Write write) {
  const size_t mark = out.buffer()->size();
  const bool encoded = GuardHook(
      failures, "encoding a value",
      [&] {
        InitTypes(encoding);
        Encoder encoder(entry, encoding);
        write(encoder);
        return true;
      },
      false);
  if (!encoded) {
    out.buffer()->resize(mark);
    out.Null();
  }
}

}  // namespace

void EncodeValue(client::EntryBuilder& entry, py::handle obj, ValueWriter& out,
                 ValueEncoding encoding, std::atomic<uint64_t>& failures) {
  Guarded(entry, out, encoding, failures,
          [&](Encoder& encoder) { encoder.Encode(obj, out, 0); });
}

void EncodeArguments(client::EntryBuilder& entry, const CallArgs& args,
                     ValueWriter& args_out, ValueWriter& kwargs_out,
                     ValueEncoding encoding, std::atomic<uint64_t>& failures) {
  Guarded(entry, args_out, encoding, failures, [&](Encoder& encoder) {
    encoder.EncodeItems(args.args, args.nargs, args_out);
  });
  Guarded(entry, kwargs_out, encoding, failures, [&](Encoder& encoder) {
    encoder.EncodeNamed(args.args + args.nargs, args.kwnames, kwargs_out);
  });
}

}  // namespace tprobe::python
