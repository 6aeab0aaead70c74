// The C++ API-call recorder of both adapters: ApiWrapper and its backward
// hook (api_hook.h).

#include "client/python/binding/api_hook.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <new>
#include <string_view>

#include "client/python/binding/py_compat.h"
#include "client/python/binding/py_types.h"
#include "client/python/binding/tensor_shim.h"
#include "client/thread_slot.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

// Interned attribute names, made at module init.
PyObject* s_grad_fn = nullptr;
PyObject* s_register_hook = nullptr;
PyObject* s_values = nullptr;
PyObject* s_inputs = nullptr;
PyObject* s_outputs = nullptr;
PyObject* s_dict = nullptr;

// --- the backward hook ------------------------------------------------------

// Registered on the grad_fn of an API call's first output tensor: reports
// the call's backward (input = the gradients flowing into the node, output
// = those it passes on). It fires even after stop(), as in msprobe. Called
// through vectorcall with the node's two tuples, which are encoded as they
// are (a tuple is a list to msprobe): no argument tuple, no copies.
struct BackwardHook {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* state;  // HookState
  PyObject* base;   // the API's name base
  int64_t index;    // the forward call's N
};

PyTypeObject g_hook_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

void HookDealloc(PyObject* self) {
  auto* hook = reinterpret_cast<BackwardHook*>(self);
  Py_XDECREF(hook->state);
  Py_XDECREF(hook->base);
  Py_TYPE(self)->tp_free(self);
}

// hook(grad_inputs, grad_outputs): the node's tuples, positional.
PyObject* HookCall(PyObject* self, PyObject* const* args, size_t nargsf,
                   PyObject* kwnames) {
  auto* hook = reinterpret_cast<BackwardHook*>(self);
  if (PyVectorcall_NARGS(nargsf) != 2 ||
      (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0)) {
    PyErr_SetString(PyExc_TypeError,
                    "an API backward hook takes (grad_inputs, grad_outputs)");
    return nullptr;
  }
  auto* state = reinterpret_cast<HookState*>(hook->state);
  long& busy = ThreadBusy();
  ++busy;
  if (state->api != nullptr) {
    PyObject* session = Py_NewRef(state->session);  // keeps api alive
    state->api->ApiCallBackward(hook->base, hook->index, args[1], args[0]);
    Py_DECREF(session);
  }
  --busy;
  Py_RETURN_NONE;
}

// --- registering the backward hook -----------------------------------------

// torch's grad_fn.register_hook(hook) calls torch.autograd.Function.
// _register_hook(hooks, hook), which puts the hook into the node's hook dict
// (a new OrderedDict when `hooks` is None) and returns (dict, handle), the
// handle a RemovableHandle. That Python path costs more than the API call's
// whole entry; tprobe keeps no handle (its hook lives as long as the node),
// so an ApiBackwardHook goes into the dict here, keyed by itself (torch keys
// by integer ids: no clash), and the handle is None. Any other hook goes to
// torch's own function, so a hook the user registers later on the same node
// gets its handle as before (the dict stays an OrderedDict, which its handle
// refers to weakly).
struct NodeHookRegistrar {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* original;      // torch's _register_hook
  PyObject* ordered_dict;  // collections.OrderedDict
};

PyTypeObject g_registrar_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyObject* RegistrarCall(PyObject* self, PyObject* const* args, size_t nargsf,
                        PyObject* kwnames) {
  auto* registrar = reinterpret_cast<NodeHookRegistrar*>(self);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs != 2 || kwnames != nullptr || !Py_IS_TYPE(args[1], &g_hook_type)) {
    return PyObject_Vectorcall(registrar->original, args, nargsf, kwnames);
  }
  PyObject* hooks = args[0] == Py_None
                        ? PyObject_CallNoArgs(registrar->ordered_dict)
                        : Py_NewRef(args[0]);
  PyObject* result = nullptr;
  if (hooks != nullptr && PyObject_SetItem(hooks, args[1], args[1]) == 0) {
    result = PyTuple_Pack(2, hooks, Py_None);
  }
  Py_XDECREF(hooks);
  return result;
}

void RegistrarDealloc(PyObject* self) {
  auto* registrar = reinterpret_cast<NodeHookRegistrar*>(self);
  Py_XDECREF(registrar->original);
  Py_XDECREF(registrar->ordered_dict);
  Py_TYPE(self)->tp_free(self);
}

// NodeHookRegistrar(original, ordered_dict).
PyObject* RegistrarNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *original, *ordered_dict;
  static const char* kKeywords[] = {"original", "ordered_dict", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:NodeHookRegistrar",
                                   const_cast<char**>(kKeywords), &original,
                                   &ordered_dict)) {
    return nullptr;
  }
  auto* registrar =
      reinterpret_cast<NodeHookRegistrar*>(type->tp_alloc(type, 0));
  if (registrar == nullptr) return nullptr;
  registrar->vectorcall = RegistrarCall;
  registrar->original = Py_NewRef(original);
  registrar->ordered_dict = Py_NewRef(ordered_dict);
  return reinterpret_cast<PyObject*>(registrar);
}

// --- the API wrapper --------------------------------------------------------

struct ApiWrapper {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* state;        // HookState; null: never records (no runtime)
  PyObject* original;     // the function it stands for
  PyObject* base;         // the API's name base, "{Prefix}.{api}"
  PyObject* tensor_type;  // torch.Tensor
  PyObject* compiling;  // CompileContext.try_get, its threading.local, or null
  PyObject* compiling_name;  // with the threading.local: the context's name
  PyObject* gates_for;       // (base, index, args) -> the call's gates, or null
  PyObject* dict;            // __name__, __doc__, __wrapped__, ...
  PyObject* weakrefs;
  std::string_view base_text;  // base's UTF-8 (the str caches it)
  client::ApiSite* site;       // what its calls reuse (owned)
  bool distributed;            // output = the arguments after the call
  bool dropout;                // one of kDropoutApis
};

// msprobe 26.x's DROPOUT_API_LIST: called with p = 0 they return their
// input as it was, so its grad_fn is the node before them, and msprobe
// collects no backward for them (pt_hook_manager.py).
constexpr std::string_view kDropoutApis[] = {"Functional.dropout",
                                             "Functional.dropout1d",
                                             "Functional.dropout2d",
                                             "Functional.dropout3d",
                                             "Functional.alpha_dropout",
                                             "Functional.feature_alpha_dropout",
                                             "Torch.dropout",
                                             "Torch.dropout_",
                                             "Torch.alpha_dropout",
                                             "Torch.alpha_dropout_",
                                             "Torch.feature_alpha_dropout",
                                             "Torch.feature_alpha_dropout_",
                                             "Torch.feature_dropout",
                                             "Torch.feature_dropout_"};

// A dropout API called with p = 0 (as msprobe reads it: the keyword p, else
// the second positional argument, else 0.5).
bool DropoutOff(PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject* p = nargs >= 2 ? args[1] : nullptr;
  if (kwnames != nullptr) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); ++i) {
      if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "p") ==
          0) {
        p = args[nargs + i];
      }
    }
  }
  if (p == nullptr || !(PyFloat_Check(p) || PyLong_Check(p))) return false;
  const double value = PyFloat_AsDouble(p);
  if (value == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return value == 0.0;
}

PyTypeObject g_wrapper_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

// What the wrapper keeps per thread (a ThreadSlot: one thread-local read
// a call).
struct ApiThread {
  // The call it records. Record never nests on a thread (the busy count
  // makes a call inside it fall through), so one serves them all and keeps
  // the capacity of its strings: a call's name and encoded inputs allocate
  // nothing once the thread is warm.
  ApiCall call;
  // The compile context's threading.local (Compiling), its __dict__ for
  // this thread state, and the state's id.
  PyObject* compile_local = nullptr;
  PyObject* compile_dict = nullptr;
  uint64_t compile_state = 0;
};

// Whether Dynamo is compiling a frame on this thread: the calls it makes
// then (on fake tensors) are not the model's. Read from the threading.local
// that holds the compile context (its per-thread __dict__, no Python frame)
// or by calling CompileContext.try_get.
bool Compiling(ApiWrapper* w, ApiThread& t) {
  if (w->compiling == nullptr) return false;
  if (w->compiling_name != nullptr) {
    // The local's __dict__ for this thread state, found once: it cannot be
    // replaced, and lives as long as the thread state and the local (which
    // w holds), so it is kept borrowed. A thread state is known by its id,
    // never reused (a C++ thread that takes the GIL may get a new state
    // each time, at the same address).
    const uint64_t state = PyThreadState_GetID(PyThreadState_Get());
    if (t.compile_local != w->compiling || t.compile_state != state) {
      PyObject* dict = PyObject_GetAttr(w->compiling, s_dict);
      if (dict == nullptr || !PyDict_Check(dict)) {
        Py_XDECREF(dict);
        PyErr_Clear();
        return false;
      }
      t.compile_local = w->compiling;
      t.compile_state = state;
      t.compile_dict = dict;
      Py_DECREF(dict);  // the local's own reference keeps it
    }
    PyObject* context =
        PyDict_GetItemWithError(t.compile_dict, w->compiling_name);  // borrowed
    if (context == nullptr) PyErr_Clear();
    return context != nullptr && context != Py_None;
  }
  PyObject* context = PyObject_CallNoArgs(w->compiling);
  if (context == nullptr) {
    PyErr_Clear();
    return false;
  }
  const bool compiling = context != Py_None;
  Py_DECREF(context);
  return compiling;
}

// The call's positional arguments as a tuple and its keyword arguments as
// a dict (what a Python `*args, **kwargs` wrapper sees).
bool Arguments(PyObject* const* args, size_t nargsf, PyObject* kwnames,
               PyObject** positional, PyObject** keywords) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  *positional = PyTuple_New(n);
  *keywords = PyDict_New();
  if (*positional == nullptr || *keywords == nullptr) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyTuple_SET_ITEM(*positional, i, Py_NewRef(args[i]));
  }
  if (kwnames != nullptr) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); ++i) {
      if (PyDict_SetItem(*keywords, PyTuple_GET_ITEM(kwnames, i),
                         args[n + i]) != 0) {
        return false;
      }
    }
  }
  return true;
}

// A distributed call's output: its arguments after the call, positional
// then keyword values (collectives work in place).
PyObject* ArgumentsAfter(PyObject* const* args, size_t nargsf,
                         PyObject* kwnames) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf) +
                       (kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0);
  PyObject* list = PyList_New(n);
  if (list == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyList_SET_ITEM(list, i, Py_NewRef(args[i]));
  }
  return list;
}

// The items of `positional` then the values of `keywords`, as a new list
// (what a distributed call's gated arguments are after it); null with an
// error set on failure.
PyObject* Joined(PyObject* positional, PyObject* keywords) {
  PyObject* list = PySequence_List(positional);
  PyObject* values = list ? PyDict_Values(keywords) : nullptr;
  if (values == nullptr ||
      PyList_SetSlice(list, PyList_GET_SIZE(list), PyList_GET_SIZE(list),
                      values) != 0) {
    Py_CLEAR(list);
  }
  Py_XDECREF(values);
  return list;
}

// The first tensor in `value`, depth first through lists, tuples and dicts
// (a new reference), or null (an error set when one occurred).
PyObject* FirstTensor(PyObject* value, PyObject* tensor_type, int depth) {
  if (PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(tensor_type))) {
    return Py_NewRef(value);
  }
  if (depth > 64) return nullptr;
  PyObject* items = nullptr;
  if (PyList_Check(value) || PyTuple_Check(value)) {
    items = PySequence_Fast(value, "");
  } else if (PyDict_Check(value)) {
    PyObject* values = PyDict_CheckExact(value)
                           ? PyDict_Values(value)
                           : PyObject_CallMethodNoArgs(value, s_values);
    if (values == nullptr) return nullptr;
    items = PySequence_Fast(values, "");
    Py_DECREF(values);
  } else {
    return nullptr;
  }
  if (items == nullptr) return nullptr;
  PyObject* found = nullptr;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); ++i) {
    found =
        FirstTensor(PySequence_Fast_GET_ITEM(items, i), tensor_type, depth + 1);
    if (found != nullptr || PyErr_Occurred()) break;
  }
  Py_DECREF(items);
  return found;
}

// Hooks the backward of forward call `index` on the grad_fn of the first
// output tensor; false (an error set) when that failed. `grad_off`: grad
// mode was off when the call began; off at its end too, the output has no
// grad_fn (torch's optimizers run so), and reading that costs more than
// the rest of the hook.
bool HookBackward(ApiWrapper* w, int64_t index, PyObject* out, bool grad_off) {
  if (w->tensor_type == nullptr || (grad_off && GradModeKnownOff())) {
    return true;
  }
  PyObject* tensor = FirstTensor(out, w->tensor_type, 0);
  if (tensor == nullptr) return !PyErr_Occurred();
  bool ok = false;
  // None where the tensor needs no gradient (or is a leaf): no hook then.
  PyObject* grad_fn = PyObject_GetAttr(tensor, s_grad_fn);
  if (grad_fn == Py_None) {
    ok = true;
  } else if (grad_fn != nullptr) {
    auto* hook = PyObject_New(BackwardHook, &g_hook_type);
    if (hook != nullptr) {
      hook->vectorcall = HookCall;
      hook->state = Py_NewRef(w->state);
      hook->base = Py_NewRef(w->base);
      hook->index = index;
      // grad_fn.register_hook(hook), with no bound method made.
      PyObject* handle = PyObject_CallMethodOneArg(
          grad_fn, s_register_hook, reinterpret_cast<PyObject*>(hook));
      ok = handle != nullptr;
      Py_XDECREF(handle);
      Py_DECREF(hook);
    }
  }
  Py_XDECREF(grad_fn);
  Py_DECREF(tensor);
  return ok;
}

// The gates of a call whose plan asks for its backward, from gates_for
// (base, index, args): a new reference, or null when there are none (None,
// or a failure, reported).
PyObject* GatesOf(ApiWrapper* w, int64_t index, PyObject* positional) {
  PyObject* n = PyLong_FromLongLong(index);
  PyObject* gates = n ? PyObject_CallFunctionObjArgs(w->gates_for, w->base, n,
                                                     positional, nullptr)
                      : nullptr;
  Py_XDECREF(n);
  if (gates == nullptr) WarnOnce(w->state, "an API hook");
  if (gates == Py_None) Py_CLEAR(gates);
  return gates;
}

// One reported call between its begin and its end: the call as the
// wrapper got it, the session's plan, and, when the gates need them, its
// arguments as a tuple and a dict (what a Python `*args, **kwargs` wrapper
// sees) and its gates. Holds a reference to the session
// (which keeps its ApiSession alive) and to each object.
struct Reported {
  Reported(PyObject* session, ApiCall& call, PyObject* const* args,
           size_t nargsf, PyObject* kwnames)
      : session(Py_NewRef(session)),
        args(args),
        nargsf(nargsf),
        kwnames(kwnames),
        call(call) {
    call.Clear();
  }
  ~Reported() {
    Py_XDECREF(gates);
    Py_XDECREF(positional);
    Py_XDECREF(keywords);
    Py_DECREF(session);
  }
  Reported(const Reported&) = delete;
  Reported& operator=(const Reported&) = delete;

  PyObject* const session;
  PyObject* const* const args;
  const size_t nargsf;
  PyObject* const kwnames;
  ApiCall& call;  // the thread's (ApiThread)
  PyObject* positional = nullptr;
  PyObject* keywords = nullptr;
  PyObject* gates = nullptr;  // null: the call runs with `args` as it came
  bool grad_off = false;      // grad mode was off as the call began
};

// The inputs through the call's gates (gates_for(...).inputs), which then
// stay in r.gates; none when gates_for gave None or failed (reported).
void GateInputs(ApiWrapper* w, Reported& r) {
  r.gates = GatesOf(w, r.call.plan.index, r.positional);
  if (r.gates == nullptr) return;
  PyObject* through =
      PyObject_CallMethodObjArgs(r.gates, s_inputs, r.positional, nullptr);
  if (through != nullptr && PyTuple_Check(through)) {
    Py_SETREF(r.positional, through);
    return;
  }
  if (through == nullptr) WarnOnce(w->state, "an API hook");
  Py_XDECREF(through);
  Py_CLEAR(r.gates);
}

// Before the API runs: its stack and inputs to the session (from the
// call's own arguments), and its inputs through its gates, when the plan
// asks for either.
void TakeInputs(ApiWrapper* w, ApiSession* api, Reported& r) {
  const bool gated = r.call.backward && w->gates_for != nullptr;
  if (r.call.entry) {
    api->TakeApiInputs(
        r.call, CallArgs{r.args, PyVectorcall_NARGS(r.nargsf), r.kwnames});
  }
  if (!gated) return;
  if (!Arguments(r.args, r.nargsf, r.kwnames, &r.positional, &r.keywords)) {
    PyErr_Clear();
    Py_CLEAR(r.positional);
    Py_CLEAR(r.keywords);
    return;
  }
  GateInputs(w, r);
}

// What the call's entry lists as its output: `out`, or a distributed call's
// arguments after the call; null on failure (reported).
PyObject* EntryOutput(ApiWrapper* w, const Reported& r, PyObject* out) {
  PyObject* output = nullptr;
  if (!w->distributed) {
    output = Py_NewRef(out);
  } else if (r.gates != nullptr) {
    output = Joined(r.positional, r.keywords);
  } else {
    output = ArgumentsAfter(r.args, r.nargsf, r.kwnames);
  }
  if (output == nullptr) WarnOnce(w->state, "an API hook");
  return output;
}

// After the entry: the call's backward hooked, either by its output going
// through the gates (what they return takes the place of `out`, whose
// reference it takes over) or by a hook on its grad_fn. Returns the output
// the caller gets.
PyObject* HookOutput(ApiWrapper* w, const Reported& r, PyObject* out) {
  if (r.gates != nullptr) {
    PyObject* through =
        PyObject_CallMethodObjArgs(r.gates, s_outputs, out, nullptr);
    if (through == nullptr) {
      WarnOnce(w->state, "an API hook");
      return out;
    }
    Py_DECREF(out);
    return through;
  }
  if (r.call.backward && w->gates_for == nullptr &&
      !(w->dropout && DropoutOff(r.args, r.nargsf, r.kwnames)) &&
      !HookBackward(w, r.call.plan.index, out, r.grad_off)) {
    WarnOnce(w->state, "an API hook");
  }
  return out;
}

// A call that is reported: begin, the stack and inputs, the gates on the
// inputs (gates_for), the API, then the entry and the end (no entry when
// the API raised, whose exception goes on unchanged), and the backward
// hook (the gates on the output, or the grad_fn hook).
PyObject* Record(ApiWrapper* w, HookState* state, long& busy, ApiThread& t,
                 PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  busy = 1;
  Reported r(state->session, t.call, args, nargsf, kwnames);
  ApiSession* api = state->api;
  const bool open = api->BeginApiCall(w->base_text, w->site, &r.call);
  if (open) {
    TakeInputs(w, api, r);
    r.grad_off = r.call.backward && GradModeKnownOff();
  }
  // Gated inputs replace the arguments; the call then goes through a tuple
  // and a dict.
  PyObject* out = r.gates != nullptr
                      ? PyObject_Call(w->original, r.positional, r.keywords)
                      : PyObject_Vectorcall(w->original, args, nargsf, kwnames);
  if (open && out == nullptr) {
    busy = 0;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    api->EndApiCall(r.call, nullptr);
    PyErr_Restore(type, value, traceback);
  } else if (open) {
    PyObject* output = r.call.entry ? EntryOutput(w, r, out) : nullptr;
    api->EndApiCall(r.call, output);
    Py_XDECREF(output);
    out = HookOutput(w, r, out);
  }
  busy = 0;
  return out;
}

// The busy count and the ApiThread are each found once a call: every
// thread-local read in a shared library is a call (thread_slot.h).
PyObject* WrapperCall(PyObject* self, PyObject* const* args, size_t nargsf,
                      PyObject* kwnames) {
  auto* w = reinterpret_cast<ApiWrapper*>(self);
  auto* state = reinterpret_cast<HookState*>(w->state);
  if (state == nullptr || !state->on || state->api == nullptr) {
    return PyObject_Vectorcall(w->original, args, nargsf, kwnames);
  }
  long& busy = ThreadBusy();
  ApiThread* t = busy == 0 ? client::ThreadSlot<ApiThread>::Get() : nullptr;
  if (t == nullptr || Compiling(w, *t)) {
    return PyObject_Vectorcall(w->original, args, nargsf, kwnames);
  }
  return Record(w, state, busy, *t, args, nargsf, kwnames);
}

// Whether ApiWrapper's arguments have the types it needs; false with a
// TypeError set when not.
bool WrapperArgsValid(PyObject* state, PyObject* original, PyObject* compiling,
                      PyObject* gates_for, PyObject* tensor_type) {
  const char* error = nullptr;
  if (state != Py_None && AsHookState(state) == nullptr) {
    error = "state must be a HookState or None";
  } else if (!PyCallable_Check(original) ||
             (gates_for != Py_None && !PyCallable_Check(gates_for))) {
    error = "original and gates_for must be callable";
  } else if (compiling != Py_None && !PyCallable_Check(compiling) &&
             !(PyTuple_Check(compiling) && PyTuple_GET_SIZE(compiling) == 2 &&
               PyUnicode_Check(PyTuple_GET_ITEM(compiling, 1)))) {
    error = "compiling must be callable or a (threading.local, name) pair";
  } else if (tensor_type != Py_None && !PyType_Check(tensor_type)) {
    error = "tensor_type must be a type or None";
  }
  if (error != nullptr) PyErr_SetString(PyExc_TypeError, error);
  return error == nullptr;
}

// A new reference to `obj`; null for None.
PyObject* NewRefOrNull(PyObject* obj) {
  return obj != Py_None ? Py_NewRef(obj) : nullptr;
}

PyObject* WrapperNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"state",       "base",        "original",
                                   "distributed", "tensor_type", "compiling",
                                   "gates_for",   nullptr};
  PyObject *state, *base, *original, *tensor_type, *compiling;
  PyObject* gates_for = Py_None;
  int distributed = 0;
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "OUOpOO|O", const_cast<char**>(keywords), &state, &base,
          &original, &distributed, &tensor_type, &compiling, &gates_for) ||
      !WrapperArgsValid(state, original, compiling, gates_for, tensor_type)) {
    return nullptr;
  }
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(base, &size);
  if (text == nullptr) return nullptr;
  auto* site = new (std::nothrow) client::ApiSite();
  if (site == nullptr) return PyErr_NoMemory();
  auto* w = reinterpret_cast<ApiWrapper*>(type->tp_alloc(type, 0));
  if (w == nullptr) {
    delete site;
    return nullptr;
  }
  w->site = site;
  w->vectorcall = WrapperCall;
  w->state = NewRefOrNull(state);
  w->original = Py_NewRef(original);
  w->base = Py_NewRef(base);
  w->tensor_type = NewRefOrNull(tensor_type);
  if (PyTuple_Check(compiling)) {
    w->compiling = Py_NewRef(PyTuple_GET_ITEM(compiling, 0));
    w->compiling_name = Py_NewRef(PyTuple_GET_ITEM(compiling, 1));
  } else {
    w->compiling = NewRefOrNull(compiling);
  }
  w->gates_for = NewRefOrNull(gates_for);
  w->base_text = std::string_view(text, static_cast<size_t>(size));
  w->distributed = distributed != 0;
  w->dropout = std::find(std::begin(kDropoutApis), std::end(kDropoutApis),
                         w->base_text) != std::end(kDropoutApis);
  return reinterpret_cast<PyObject*>(w);
}

int WrapperTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* w = reinterpret_cast<ApiWrapper*>(self);
  Py_VISIT(w->state);
  Py_VISIT(w->original);
  Py_VISIT(w->base);
  Py_VISIT(w->tensor_type);
  Py_VISIT(w->compiling);
  Py_VISIT(w->compiling_name);
  Py_VISIT(w->gates_for);
  Py_VISIT(w->dict);
  return 0;
}

int WrapperClear(PyObject* self) {
  auto* w = reinterpret_cast<ApiWrapper*>(self);
  Py_CLEAR(w->state);
  Py_CLEAR(w->original);
  Py_CLEAR(w->tensor_type);
  Py_CLEAR(w->compiling);
  Py_CLEAR(w->compiling_name);
  Py_CLEAR(w->gates_for);
  Py_CLEAR(w->dict);
  return 0;  // base stays: base_text points into it
}

void WrapperDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  auto* w = reinterpret_cast<ApiWrapper*>(self);
  if (w->weakrefs != nullptr) PyObject_ClearWeakRefs(self);
  WrapperClear(self);
  Py_CLEAR(w->base);
  delete w->site;
  Py_TYPE(self)->tp_free(self);
}

// Bound like a function: `tensor.add` is a method of the tensor.
PyObject* WrapperGet(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

PyObject* WrapperRepr(PyObject* self) {
  return PyUnicode_FromFormat("<tprobe API wrapper %U of %R>",
                              reinterpret_cast<ApiWrapper*>(self)->base,
                              reinterpret_cast<ApiWrapper*>(self)->original);
}

PyGetSetDef g_wrapper_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr,
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

void DefineApiHook(py::module_& m) {
  s_grad_fn = InternName("grad_fn");
  s_register_hook = InternName("register_hook");
  s_values = InternName("values");
  s_inputs = InternName("inputs");
  s_outputs = InternName("outputs");
  s_dict = InternName("__dict__");

  PyTypeObject& hook = g_hook_type;
  hook.tp_name = "tprobe._C.ApiBackwardHook";
  hook.tp_doc = "A grad_fn hook that reports an API call's backward.";
  hook.tp_basicsize = sizeof(BackwardHook);
  hook.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  hook.tp_dealloc = HookDealloc;
  hook.tp_vectorcall_offset = offsetof(BackwardHook, vectorcall);
  hook.tp_call = PyVectorcall_Call;
  ReadyType(&hook);

  PyTypeObject& registrar = g_registrar_type;
  registrar.tp_name = "tprobe._C.NodeHookRegistrar";
  registrar.tp_doc =
      "NodeHookRegistrar(original, ordered_dict): stands in for torch's "
      "Function._register_hook(hooks, hook) -> (dict, handle), which "
      "grad_fn.register_hook calls: an ApiBackwardHook goes into the "
      "node's hook dict (a new ordered_dict() when hooks is None) with no "
      "handle (None); any other hook goes to `original`.";
  registrar.tp_basicsize = sizeof(NodeHookRegistrar);
  registrar.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  registrar.tp_new = RegistrarNew;
  registrar.tp_dealloc = RegistrarDealloc;
  registrar.tp_vectorcall_offset = offsetof(NodeHookRegistrar, vectorcall);
  registrar.tp_call = PyVectorcall_Call;
  ReadyType(&registrar);
  AddType(m, "NodeHookRegistrar", &registrar);

  PyTypeObject& wrapper = g_wrapper_type;
  wrapper.tp_name = "tprobe._C.ApiWrapper";
  wrapper.tp_doc =
      "ApiWrapper(state, base, original, distributed, tensor_type, "
      "compiling, gates_for=None): stands in for the API `original`, "
      "reporting its calls as `base` to state.session while state.on. "
      "distributed: the output is the arguments after the call. "
      "tensor_type: a backward hook goes on the grad_fn of the first output "
      "of that type (None: none). compiling: CompileContext.try_get, or "
      "a (threading.local, name) pair whose `name` on the calling thread is "
      "the compile context (read with no Python frame), or None. "
      "gates_for(base, index, args): the gates of a call whose "
      "backward is recorded (None: none), whose inputs(args) runs before "
      "the call and outputs(out) after it, each returning what goes on.";
  wrapper.tp_basicsize = sizeof(ApiWrapper);
  wrapper.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                     Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  wrapper.tp_new = WrapperNew;
  wrapper.tp_dealloc = WrapperDealloc;
  wrapper.tp_traverse = WrapperTraverse;
  wrapper.tp_clear = WrapperClear;
  wrapper.tp_vectorcall_offset = offsetof(ApiWrapper, vectorcall);
  wrapper.tp_call = PyVectorcall_Call;
  wrapper.tp_descr_get = WrapperGet;
  wrapper.tp_repr = WrapperRepr;
  wrapper.tp_dictoffset = offsetof(ApiWrapper, dict);
  wrapper.tp_weaklistoffset = offsetof(ApiWrapper, weakrefs);
  wrapper.tp_getset = g_wrapper_getset;
  ReadyType(&wrapper);
  AddType(m, "ApiWrapper", &wrapper);
}

}  // namespace tprobe::python
