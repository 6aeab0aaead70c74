// The module hooks' eager path in C++ (module_hook.h).

#include "client/python/binding/module_hook.h"

#include <Python.h>
#include <structmember.h>

#include <cstddef>
#include <cstdint>

#include "client/python/binding/call_stack.h"
#include "client/python/binding/hook_state.h"
#include "client/python/binding/module_calls.h"
#include "client/python/binding/py_compat.h"
#include "client/python/binding/py_types.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

// What the hooks call in torch (set_module_hook_tools); null until set.
struct Tools {
  PyObject* tensor = nullptr;            // torch.Tensor
  PyObject* apply = nullptr;             // the identity Function's apply
  PyObject* functorch_apply = nullptr;   // ... under functorch transforms
  PyObject* functorch_active = nullptr;  // null: never
  PyObject* is_grad_enabled = nullptr;
  PyObject* wrap = nullptr;  // wrap(report, value) for any other value
};

Tools g_tools;

// The input_kwargs of a hook that gets none (PyTorch 1.13); never changed.
PyObject* g_no_kwargs = nullptr;

PyObject* s_local = nullptr;
PyObject* s_modules = nullptr;
PyObject* s_pop_call = nullptr;
PyObject* s_index = nullptr;
PyObject* s_backward = nullptr;
PyObject* s_requires_grad = nullptr;
PyObject* s_parameters = nullptr;
PyObject* s_ensure = nullptr;
PyObject* s_on_output_grads = nullptr;
PyObject* s_on_input_grads = nullptr;

// The error set now, from one of tprobe's own steps in a hook at `where`:
// an Exception is reported through rt.warn_once and the hook returns None;
// anything else (KeyboardInterrupt) goes on to the trainer.
PyObject* Failed(PyObject* rt, const char* where) {
  if (!PyErr_ExceptionMatches(PyExc_Exception)) return nullptr;
  WarnOnce(rt, where);
  Py_RETURN_NONE;
}

// object.name as a bool: 1, 0, or -1 with an error set.
int Flag(PyObject* object, PyObject* name) {
  PyObject* value = PyObject_GetAttr(object, name);
  if (value == nullptr) return -1;
  const int truth = PyObject_IsTrue(value);
  Py_DECREF(value);
  return truth;
}

// f() as a bool: 1, 0, or -1 with an error set.
int CallFlag(PyObject* f) {
  PyObject* value = PyObject_CallNoArgs(f);
  if (value == nullptr) return -1;
  const int truth = PyObject_IsTrue(value);
  Py_DECREF(value);
  return truth;
}

// This thread's stack of open module calls (rt.local.modules: a list, or
// None before the first): a new reference, or null with an error set.
PyObject* OpenCalls(PyObject* rt) {
  PyObject* local = PyObject_GetAttr(rt, s_local);
  if (local == nullptr) return nullptr;
  PyObject* calls = PyObject_GetAttr(local, s_modules);
  Py_DECREF(local);
  return calls;
}

// Whether `calls` (from OpenCalls) holds a call.
bool AnyOpen(PyObject* calls) {
  return PyList_Check(calls) && PyList_GET_SIZE(calls) > 0;
}

// --- ModuleCall -------------------------------------------------------------

struct ModuleCall {
  PyObject_HEAD PyObject* rt;  // the Runtime
  PyObject* module;
  PyObject* base;
  PyObject* handle;        // the forward's Call
  PyObject* grad_outputs;  // a list once the output gradients arrived
  PyObject* backward;      // the open backward's Call, or null
  char wants_backward;     // the call gets a backward entry
  char waits_inputs;       // which waits for argument gradients
};

PyTypeObject g_call_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

// A new call of `module` (references taken), or null with an error set.
ModuleCall* NewCall(PyObject* rt, PyObject* module, PyObject* base,
                    PyObject* handle) {
  auto* call =
      reinterpret_cast<ModuleCall*>(g_call_type.tp_alloc(&g_call_type, 0));
  if (call == nullptr) return nullptr;
  call->rt = Py_NewRef(rt);
  call->module = Py_NewRef(module);
  call->base = Py_NewRef(base);
  call->handle = Py_NewRef(handle);
  return call;
}

int CallTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* call = reinterpret_cast<ModuleCall*>(self);
  Py_VISIT(call->rt);
  Py_VISIT(call->module);
  Py_VISIT(call->base);
  Py_VISIT(call->handle);
  Py_VISIT(call->grad_outputs);
  Py_VISIT(call->backward);
  return 0;
}

int CallClear(PyObject* self) {
  auto* call = reinterpret_cast<ModuleCall*>(self);
  Py_CLEAR(call->rt);
  Py_CLEAR(call->module);
  Py_CLEAR(call->base);
  Py_CLEAR(call->handle);
  Py_CLEAR(call->grad_outputs);
  Py_CLEAR(call->backward);
  return 0;
}

void CallDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  CallClear(self);
  Py_TYPE(self)->tp_free(self);
}

// Ends the call's open backward with the argument gradients `grad_inputs`
// (a list): its entry is written.
void EndBackward(ModuleCall* call, HookState* state, PyObject* grad_inputs) {
  PyObject* handle = call->backward;
  call->backward = nullptr;
  if (handle == nullptr) return;
  PyObject* empty = call->grad_outputs == nullptr ? PyList_New(0) : nullptr;
  PyObject* grad_outputs = empty != nullptr ? empty : call->grad_outputs;
  if (grad_outputs != nullptr) {
    state->modules->BackwardEnd(handle, grad_outputs, grad_inputs);
  }
  Py_XDECREF(empty);
  Py_DECREF(handle);
}

// on_output_grads(grads): the module's backward begins; calls made until
// it ends (its children's backward) are inside it.
PyObject* OnOutputGrads(PyObject* self, PyObject* grads) {
  auto* call = reinterpret_cast<ModuleCall*>(self);
  HookState* state = Recording(call->rt);
  if (state == nullptr) Py_RETURN_NONE;
  // One item per aliased tensor, None where no gradient reached it.
  PyObject* list = PySequence_List(grads);
  if (list == nullptr) return Failed(call->rt, "a module backward hook");
  Py_XSETREF(call->grad_outputs, list);
  PyObject* index = PyObject_GetAttr(call->handle, s_index);
  const int64_t n = index != nullptr ? PyLong_AsLongLong(index) : -1;
  Py_XDECREF(index);
  if (n == -1 && PyErr_Occurred()) {
    return Failed(call->rt, "a module backward hook");
  }
  PyObject* session = Py_NewRef(state->session);  // keeps modules alive
  ++ThreadBusy();
  py::object backward = state->modules->BackwardBegin(call->base, n);
  Py_XSETREF(call->backward,
             backward.is_none() ? nullptr : backward.release().ptr());
  if (!call->waits_inputs) {
    // No argument needs a gradient: as torch's BackwardHook (msprobe 26.x)
    // reports it, the entry's output is empty.
    PyObject* none = PyList_New(0);
    if (none != nullptr) EndBackward(call, state, none);
    Py_XDECREF(none);
  }
  --ThreadBusy();
  Py_DECREF(session);
  if (PyErr_Occurred()) return Failed(call->rt, "a module backward hook");
  Py_RETURN_NONE;
}

// on_input_grads(grads): the module's backward is done.
PyObject* OnInputGrads(PyObject* self, PyObject* grads) {
  auto* call = reinterpret_cast<ModuleCall*>(self);
  HookState* state = Recording(call->rt);
  if (state == nullptr) Py_RETURN_NONE;
  PyObject* list = PySequence_List(grads);
  if (list == nullptr) return Failed(call->rt, "a module backward hook");
  PyObject* session = Py_NewRef(state->session);
  ++ThreadBusy();
  EndBackward(call, state, list);
  --ThreadBusy();
  Py_DECREF(session);
  Py_DECREF(list);
  if (PyErr_Occurred()) return Failed(call->rt, "a module backward hook");
  Py_RETURN_NONE;
}

PyMethodDef g_call_methods[] = {
    {"on_output_grads", OnOutputGrads, METH_O,
     "on_output_grads(grads): the output gradients arrived, one per "
     "aliased tensor: the call's backward begins."},
    {"on_input_grads", OnInputGrads, METH_O,
     "on_input_grads(grads): the argument gradients arrived: the call's "
     "backward ends, with its entry."},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef g_call_members[] = {
    {"rt", T_OBJECT, offsetof(ModuleCall, rt), READONLY, "the Runtime"},
    {"module", T_OBJECT, offsetof(ModuleCall, module), READONLY,
     "the called module"},
    {"base", T_OBJECT, offsetof(ModuleCall, base), READONLY,
     "Module.{path}.{Class}"},
    {"handle", T_OBJECT, offsetof(ModuleCall, handle), READONLY,
     "the forward's tprobe._C.Call"},
    {"grad_outputs", T_OBJECT, offsetof(ModuleCall, grad_outputs), READONLY,
     "the output gradients once they arrived, else None"},
    {"backward", T_OBJECT, offsetof(ModuleCall, backward), READONLY,
     "the open backward's Call, else None"},
    {"wants_backward", T_BOOL, offsetof(ModuleCall, wants_backward), 0,
     "the call gets a backward entry"},
    {"waits_inputs", T_BOOL, offsetof(ModuleCall, waits_inputs), 0,
     "its backward ends when the argument gradients arrive"},
    {nullptr, 0, 0, 0, nullptr}};

// --- the identity nodes around tensors
// ----------------------------------------

// Whether the tools are in; false with an error set when not.
bool HaveTools() {
  if (g_tools.wrap != nullptr) return true;
  PyErr_SetString(PyExc_RuntimeError, "set_module_hook_tools was not called");
  return false;
}

// Whether `value` is a torch.Tensor: 1, 0, or -1 with an error set.
int IsTensor(PyObject* value) {
  return PyObject_IsInstance(value, g_tools.tensor);
}

// The alias of `tensor` whose backward hands `report` its gradient.
PyObject* Alias(PyObject* report, PyObject* tensor) {
  PyObject* apply = g_tools.apply;
  if (g_tools.functorch_active != nullptr) {
    const int active = CallFlag(g_tools.functorch_active);
    if (active < 0) return nullptr;
    if (active) apply = g_tools.functorch_apply;
  }
  PyObject* args[] = {report, tensor};
  PyObject* result = PyObject_Vectorcall(apply, args, 2, nullptr);
  if (result == nullptr || !PyTuple_Check(result)) return result;
  PyObject* alias = PyTuple_GET_SIZE(result) == 1
                        ? Py_NewRef(PyTuple_GET_ITEM(result, 0))
                        : nullptr;
  if (alias == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the alias returned no tensor");
  }
  Py_DECREF(result);
  return alias;
}

// `tensor`'s alias (None when it needs no gradient).
PyObject* AliasIfNeeded(PyObject* report, PyObject* tensor) {
  const int needs = Flag(tensor, s_requires_grad);
  if (needs < 0) return nullptr;
  if (!needs) Py_RETURN_NONE;
  return Alias(report, tensor);
}

// `value` with each tensor that needs a gradient replaced by its alias,
// else None: a lone tensor in a tuple here, anything else by the wrap tool.
PyObject* Wrap(PyObject* report, PyObject* value) {
  if (PyTuple_CheckExact(value) && PyTuple_GET_SIZE(value) == 1) {
    PyObject* only = PyTuple_GET_ITEM(value, 0);
    const int tensor = IsTensor(only);
    if (tensor < 0) return nullptr;
    if (tensor) {
      PyObject* alias = AliasIfNeeded(report, only);
      if (alias == nullptr || alias == Py_None) return alias;
      PyObject* args = PyTuple_Pack(1, alias);
      Py_DECREF(alias);
      return args;
    }
  }
  PyObject* args[] = {report, value};
  return PyObject_Vectorcall(g_tools.wrap, args, 2, nullptr);
}

// --- ModuleHookBase ---------------------------------------------------------

struct ModuleHookBase {
  PyObject_HEAD PyObject* rt;  // the Runtime
  PyObject* base;              // Module.{path}.{Class}
  PyObject* gate;              // None (or null): always
  PyObject* grad_hooks;        // GradHooks
  char inplace;                // no backward entry
  char params_hooked;          // grad_hooks.ensure ran for the module
};

PyTypeObject g_hook_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

ModuleHookBase* AsHook(PyObject* self) {
  return reinterpret_cast<ModuleHookBase*>(self);
}

// Whether a call that begins now is reported: 1, 0, or -1 with an error
// set.
int Records(ModuleHookBase* h) {
  if (Recording(h->rt) == nullptr) return 0;
  if (h->gate != nullptr && h->gate != Py_None) {
    const int open = CallFlag(h->gate);
    if (open <= 0) return open;
  }
  return ThreadBusy() == 0;
}

// Opens a call (the caller holds busy): a new ModuleCall on this thread's
// stack, None when the session records none, or null with an error set.
PyObject* Begin(ModuleHookBase* h, HookState* state, PyObject* module,
                PyObject* args, PyObject* kwargs, const Stack* stack) {
  py::object handle = state->modules->Open(h->base, args, kwargs, stack);
  if (handle.is_none()) Py_RETURN_NONE;
  PyObject* calls = OpenCalls(h->rt);
  if (calls == Py_None) {
    Py_SETREF(calls, PyObject_CallMethod(h->rt, "modules", nullptr));
  }
  if (calls == nullptr) return nullptr;
  PyObject* call = reinterpret_cast<PyObject*>(
      NewCall(h->rt, module, h->base, handle.ptr()));
  if (call != nullptr && PyList_Append(calls, call) != 0) Py_CLEAR(call);
  Py_DECREF(calls);
  return call;
}

// The innermost open call of `module`, off this thread's stack (a new
// reference), None when it has none, or null with an error set.
PyObject* Take(ModuleHookBase* h, PyObject* module) {
  PyObject* calls = OpenCalls(h->rt);
  if (calls == nullptr) return nullptr;
  if (!AnyOpen(calls)) {
    Py_DECREF(calls);
    Py_RETURN_NONE;
  }
  const Py_ssize_t n = PyList_GET_SIZE(calls);
  PyObject* last = PyList_GET_ITEM(calls, n - 1);
  PyObject* call = nullptr;
  if (Py_TYPE(last) == &g_call_type &&
      reinterpret_cast<ModuleCall*>(last)->module == module) {
    call = Py_NewRef(last);  // the usual case: the innermost open call
    if (PyList_SetSlice(calls, n - 1, n, nullptr) != 0) Py_CLEAR(call);
  } else {
    call = PyObject_CallMethodOneArg(h->rt, s_pop_call, module);
  }
  Py_DECREF(calls);
  return call;
}

// Closes `call` with its output and the module's parameters (the caller
// holds busy): 1 when its backward is awaited, 0, or -1 with an error set.
int End(ModuleHookBase* h, HookState* state, ModuleCall* call, PyObject* module,
        PyObject* output) {
  PyObject* parameters = PyObject_GetAttr(module, s_parameters);
  if (parameters == nullptr) return -1;
  // The session leaves output and parameters out of a call without an
  // entry.
  state->modules->End(call->handle, output, parameters);
  Py_DECREF(parameters);
  const int backward = Flag(call->handle, s_backward);
  if (backward <= 0) return backward;
  if (!h->params_hooked) {
    h->params_hooked = 1;
    PyObject* done = PyObject_CallMethodObjArgs(h->grad_hooks, s_ensure, module,
                                                h->base, nullptr);
    if (done == nullptr) return -1;
    Py_DECREF(done);
  }
  return call->wants_backward;
}

// The module's innermost open call ends without an entry (its forward
// raised), so that the calls after it are not taken for its children.
void Abort(ModuleHookBase* h, HookState* state, PyObject* module) {
  PyObject* calls = OpenCalls(h->rt);
  const bool open = calls != nullptr && AnyOpen(calls);
  Py_XDECREF(calls);
  PyObject* call = open && ThreadBusy() == 0 ? Take(h, module) : nullptr;
  if (call != nullptr && call != Py_None) {
    ++ThreadBusy();
    state->modules->End(reinterpret_cast<ModuleCall*>(call)->handle, Py_None,
                        Py_None);
    --ThreadBusy();
  }
  Py_XDECREF(call);
}

PyObject* HookRecords(PyObject* self, PyObject*) {
  const int records = Records(AsHook(self));
  return records < 0 ? nullptr : PyBool_FromLong(records);
}

PyObject* HookBegin(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  if (!Arity("ModuleHookBase.begin", n, 3, 4)) return nullptr;
  ModuleHookBase* h = AsHook(self);
  HookState* state = Recording(h->rt);
  if (state == nullptr) Py_RETURN_NONE;
  const Stack* stack = nullptr;
  if (n == 4 && args[3] != Py_None) {
    try {
      stack = py::handle(args[3]).cast<const Stack*>();
    } catch (const py::cast_error&) {
      PyErr_SetString(PyExc_TypeError, "begin: stack must be a Stack or None");
      return nullptr;
    }
  }
  return Begin(h, state, args[0], args[1], args[2], stack);
}

PyObject* HookTake(PyObject* self, PyObject* module) {
  return Take(AsHook(self), module);
}

PyObject* HookEnd(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  if (!Arity("ModuleHookBase.end", n, 3, 3)) return nullptr;
  ModuleHookBase* h = AsHook(self);
  if (Py_TYPE(args[0]) != &g_call_type) {
    PyErr_SetString(PyExc_TypeError, "end: call must be a ModuleCall");
    return nullptr;
  }
  HookState* state = WithModules(h->rt);
  if (state == nullptr) Py_RETURN_FALSE;
  const int awaited =
      End(h, state, reinterpret_cast<ModuleCall*>(args[0]), args[1], args[2]);
  return awaited < 0 ? nullptr : PyBool_FromLong(awaited);
}

// eager_pre(module, args, kwargs): as msprobe 26.x, the stack and the
// inputs are taken when the module begins (an in-place module shows its
// inputs unchanged).
PyObject* HookPre(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  if (!Arity("ModuleHookBase.eager_pre", n, 3, 3)) return nullptr;
  ModuleHookBase* h = AsHook(self);
  PyObject *module = args[0], *margs = args[1], *kwargs = args[2];
  const int records = HaveTools() ? Records(h) : -1;
  if (records <= 0) {
    return records < 0 ? Failed(h->rt, "a module forward pre-hook")
                       : Py_NewRef(Py_None);
  }
  HookState* state = AsHookState(h->rt);
  PyObject* session = Py_NewRef(state->session);
  ++ThreadBusy();
  PyObject* call = Begin(h, state, module, margs,
                         kwargs != Py_None ? kwargs : g_no_kwargs, nullptr);
  PyObject* new_args = call != nullptr ? Py_NewRef(Py_None) : nullptr;
  if (call != nullptr && call != Py_None && !h->inplace) {
    auto* c = reinterpret_cast<ModuleCall*>(call);
    int wants = Flag(c->handle, s_backward);
    if (wants > 0) wants = CallFlag(g_tools.is_grad_enabled);
    if (wants > 0) {
      c->wants_backward = 1;
      PyObject* report = PyObject_GetAttr(call, s_on_input_grads);
      Py_SETREF(new_args, report ? Wrap(report, margs) : nullptr);
      Py_XDECREF(report);
      c->waits_inputs = new_args != nullptr && new_args != Py_None;
    } else if (wants < 0) {
      Py_CLEAR(new_args);
    }
  }
  --ThreadBusy();
  Py_DECREF(session);
  Py_XDECREF(call);
  if (new_args == nullptr) return Failed(h->rt, "a module forward pre-hook");
  if (new_args == Py_None || kwargs == Py_None) return new_args;
  PyObject* both = PyTuple_Pack(2, new_args, kwargs);
  Py_DECREF(new_args);
  return both;
}

// Whether the hook runs for a forward that raised (torch's always_call
// hooks run inside its except clause, with no output).
bool ForwardRaised() {
  PyObject *type, *value, *traceback;
  PyErr_GetExcInfo(&type, &value, &traceback);
  const bool raised = value != nullptr && value != Py_None;
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  return raised;
}

// eager_post(module, args, kwargs, output)
PyObject* HookPost(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  if (!Arity("ModuleHookBase.eager_post", n, 4, 4)) return nullptr;
  ModuleHookBase* h = AsHook(self);
  PyObject *module = args[0], *output = args[3];
  HookState* state = WithModules(h->rt);
  if (state == nullptr || ThreadBusy() != 0) {
    Py_RETURN_NONE;
  }
  if (output == Py_None && ForwardRaised()) {
    Abort(h, state, module);
    if (PyErr_Occurred()) return Failed(h->rt, "a module forward hook");
    Py_RETURN_NONE;
  }
  PyObject* call = HaveTools() ? Take(h, module) : nullptr;
  if (call == nullptr) return Failed(h->rt, "a module forward hook");
  if (call == Py_None) return call;
  PyObject* session = Py_NewRef(state->session);
  ++ThreadBusy();
  PyObject* result = nullptr;
  const int awaited =
      End(h, state, reinterpret_cast<ModuleCall*>(call), module, output);
  if (awaited == 0) {
    result = Py_NewRef(Py_None);
  } else if (awaited > 0) {
    PyObject* report = PyObject_GetAttr(call, s_on_output_grads);
    const int tensor = report != nullptr ? IsTensor(output) : -1;
    if (tensor > 0) {  // the usual case, without a walk
      result = AliasIfNeeded(report, output);
    } else if (tensor == 0) {
      result = Wrap(report, output);
    }
    Py_XDECREF(report);
  }
  --ThreadBusy();
  Py_DECREF(session);
  Py_DECREF(call);
  return result != nullptr ? result : Failed(h->rt, "a module forward hook");
}

PyObject* HookAbort(PyObject* self, PyObject* module) {
  ModuleHookBase* h = AsHook(self);
  HookState* state = WithModules(h->rt);
  if (state == nullptr) Py_RETURN_NONE;
  Abort(h, state, module);
  if (PyErr_Occurred()) return Failed(h->rt, "a module forward hook");
  Py_RETURN_NONE;
}

PyMethodDef g_hook_methods[] = {
    {"records", HookRecords, METH_NOARGS,
     "records($self, /)\n--\n\nWhether a call that begins now is reported."},
    {"begin", AsMethod(HookBegin), METH_FASTCALL,
     "begin($self, module, args, kwargs, stack=None, /)\n--\n\n"
     "Opens a call on this thread (the caller holds busy); its ModuleCall, "
     "or None when it is not recorded."},
    {"take", HookTake, METH_O,
     "take($self, module, /)\n--\n\n"
     "The innermost open call of `module`, off this thread's stack."},
    {"end", AsMethod(HookEnd), METH_FASTCALL,
     "end($self, call, module, output, /)\n--\n\n"
     "Closes `call` with its output and the module's parameters (the "
     "caller holds busy); True when its backward is awaited."},
    {"eager_pre", AsMethod(HookPre), METH_FASTCALL,
     "eager_pre($self, module, args, kwargs, /)\n--\n\n"
     "The forward pre-hook (kwargs None: torch hands none)."},
    {"eager_post", AsMethod(HookPost), METH_FASTCALL,
     "eager_post($self, module, args, kwargs, output, /)\n--\n\n"
     "The forward hook."},
    {"abort", HookAbort, METH_O,
     "abort($self, module, /)\n--\n\n"
     "The forward of `module` raised: its innermost open call ends without "
     "an entry."},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef g_hook_members[] = {
    {"rt", T_OBJECT, offsetof(ModuleHookBase, rt), 0, "the Runtime"},
    {"base", T_OBJECT, offsetof(ModuleHookBase, base), 0,
     "Module.{path}.{Class}"},
    {"gate", T_OBJECT, offsetof(ModuleHookBase, gate), 0,
     "None, or gate(): whether the module records now"},
    {"grad_hooks", T_OBJECT, offsetof(ModuleHookBase, grad_hooks), 0,
     "grad_hooks.ensure(module, base) hooks the module's parameters"},
    {"inplace", T_BOOL, offsetof(ModuleHookBase, inplace), 0,
     "the module's calls get no backward entry"},
    {"params_hooked", T_BOOL, offsetof(ModuleHookBase, params_hooked), 0,
     "grad_hooks.ensure ran for the module"},
    {nullptr, 0, 0, 0, nullptr}};

int HookTraverse(PyObject* self, visitproc visit, void* arg) {
  ModuleHookBase* h = AsHook(self);
  Py_VISIT(h->rt);
  Py_VISIT(h->base);
  Py_VISIT(h->gate);
  Py_VISIT(h->grad_hooks);
  return 0;
}

int HookClear(PyObject* self) {
  ModuleHookBase* h = AsHook(self);
  Py_CLEAR(h->rt);
  Py_CLEAR(h->base);
  Py_CLEAR(h->gate);
  Py_CLEAR(h->grad_hooks);
  return 0;
}

void HookDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  HookClear(self);
  Py_TYPE(self)->tp_free(self);
}

void SetTools(py::object tensor, py::object apply, py::object functorch_apply,
              py::object functorch_active, py::object is_grad_enabled,
              py::object wrap) {
  for (const py::object* f :
       {&apply, &functorch_apply, &is_grad_enabled, &wrap}) {
    if (!PyCallable_Check(f->ptr())) {
      throw py::type_error("set_module_hook_tools takes callables");
    }
  }
  if (!PyType_Check(tensor.ptr())) {
    throw py::type_error("set_module_hook_tools: tensor must be a type");
  }
  Tools tools;
  tools.tensor = tensor.release().ptr();
  tools.apply = apply.release().ptr();
  tools.functorch_apply = functorch_apply.release().ptr();
  tools.functorch_active =
      functorch_active.is_none() ? nullptr : functorch_active.release().ptr();
  tools.is_grad_enabled = is_grad_enabled.release().ptr();
  tools.wrap = wrap.release().ptr();
  for (PyObject* old :
       {g_tools.tensor, g_tools.apply, g_tools.functorch_apply,
        g_tools.functorch_active, g_tools.is_grad_enabled, g_tools.wrap}) {
    Py_XDECREF(old);
  }
  g_tools = tools;
}

}  // namespace

void DefineModuleHook(py::module_& m) {
  s_local = InternName("local");
  s_modules = InternName("modules");
  s_pop_call = InternName("pop_call");
  s_index = InternName("index");
  s_backward = InternName("backward");
  s_requires_grad = InternName("requires_grad");
  s_parameters = InternName("_parameters");
  s_ensure = InternName("ensure");
  s_on_output_grads = InternName("on_output_grads");
  s_on_input_grads = InternName("on_input_grads");
  g_no_kwargs = PyDict_New();
  if (g_no_kwargs == nullptr) throw py::error_already_set();

  PyTypeObject& call = g_call_type;
  call.tp_name = "tprobe._C.ModuleCall";
  call.tp_doc =
      "One module forward call on a thread, and then its backward: the "
      "output gradients arrive (on_output_grads: its backward begins), "
      "then those of its tensor arguments (on_input_grads: it ends). Made "
      "by ModuleHookBase.begin.";
  call.tp_basicsize = sizeof(ModuleCall);
  call.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  call.tp_dealloc = CallDealloc;
  call.tp_traverse = CallTraverse;
  call.tp_clear = CallClear;
  call.tp_methods = g_call_methods;
  call.tp_members = g_call_members;
  ReadyType(&call);
  AddType(m, "ModuleCall", &call);

  PyTypeObject& hook = g_hook_type;
  hook.tp_name = "tprobe._C.ModuleHookBase";
  hook.tp_doc =
      "The forward pre-hook and hook of one module, in C++: the base of "
      "tprobe.torch.module_hooks._ModuleHook (client/python/binding/"
      "module_hook.h).";
  hook.tp_basicsize = sizeof(ModuleHookBase);
  hook.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  hook.tp_new = PyType_GenericNew;
  hook.tp_dealloc = HookDealloc;
  hook.tp_traverse = HookTraverse;
  hook.tp_clear = HookClear;
  hook.tp_methods = g_hook_methods;
  hook.tp_members = g_hook_members;
  ReadyType(&hook);
  AddType(m, "ModuleHookBase", &hook);

  m.def("set_module_hook_tools", &SetTools, py::arg("tensor"), py::arg("apply"),
        py::arg("functorch_apply"), py::arg("functorch_active"),
        py::arg("is_grad_enabled"), py::arg("wrap"),
        "Hands the module hooks what they call in torch (module_hook.h).");
}

}  // namespace tprobe::python
