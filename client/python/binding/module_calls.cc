// A tprobe._C.Session's module (and Cell) calls (module_calls.h).

#include "client/python/binding/module_calls.h"

#include <utility>

#include "client/python/binding/call_stack.h"
#include "client/recorder.h"

namespace py = pybind11;

namespace tprobe::python {

using client::Part;
using record::ValueWriter;

ModuleCalls::ModuleCalls(HookedSession& session, EntryValues& values)
    : session_(session), values_(values) {}

py::object ModuleCalls::Begin(py::handle base) {
  return BeginCall("Session.module_begin", base, true, 0);
}

// Writes the input side of the entry (input_args, input_kwargs), as msprobe
// 26.x does in the forward pre-hook.
void ModuleCalls::Inputs(py::handle handle, py::handle args, py::handle kwargs,
                         const Stack* stack) {
  session_.Hook("Session.module_inputs", [&](client::Session& session) {
    const Call* call = session_.Open(handle);
    if (call == nullptr || !call->plan.stack()) return;
    const client::CallPlan& plan = call->plan;
    client::EntryBuilder entry(session.recorder());
    if (plan.input) {
      values_.Encode(entry, args, entry.Whole(Part::kInputArgs));
      if (PyDict_Check(kwargs.ptr())) {
        values_.Encode(entry, kwargs, entry.Whole(Part::kInputKwargs));
      } else {
        entry.Open(Part::kInputKwargs);
      }
    }
    // With an empty body the record only lists the stack.
    client::Recorder& recorder = session.recorder();
    session.WriteEntry(plan,
                       stack != nullptr ? InternStack(recorder, *stack)
                                        : InternCapturedStack(recorder),
                       entry);
  });
}

py::object ModuleCalls::Open(py::handle base, py::handle args,
                             py::handle kwargs, const Stack* stack) {
  py::object handle = Begin(base);
  if (!handle.is_none()) Inputs(handle, args, kwargs, stack);
  return handle;
}

void ModuleCalls::End(py::handle handle, py::handle output,
                      py::handle parameters) {
  session_.Hook("Session.module_end", [&](client::Session& session) {
    Call* call = session_.Open(handle);
    if (call == nullptr) return;
    call->open = false;
    if (!call->entry) output = parameters = py::none();
    client::CallPlan& plan = call->plan;
    session.CheckEnd(&plan);
    if (plan.output) {
      client::EntryBuilder entry(session.recorder());
      values_.EncodeOutput(entry, output, entry.Whole(Part::kOutput));
      ValueWriter& params = entry.Open(Part::kParameters);
      if (PyDict_Check(parameters.ptr())) {
        for (auto [k, v] : py::reinterpret_borrow<py::dict>(parameters)) {
          if (v.is_none()) continue;
          params.Key(py::str(k).cast<std::string>());
          values_.Encode(entry, v, params);
        }
      }
      session.WriteEntry(plan, 0, entry);
    }
    session.EndCall(plan);
  });
}

py::object ModuleCalls::BackwardBegin(py::handle base, int64_t index) {
  return BeginCall("Session.module_backward_begin", base, false,
                   static_cast<uint32_t>(index));
}

py::object ModuleCalls::BeginCall(const char* where, py::handle base,
                                  bool forward, uint32_t index) {
  return session_.Hook(
      where,
      [&](client::Session& session) -> py::object {
        std::string_view text;
        client::CallPlan plan;
        if (!Text(base, &text) ||
            !session.BeginModule(text, forward, index, &plan)) {
          return py::none();
        }
        return session_.Handle(std::move(plan));
      },
      py::none());
}

void ModuleCalls::BackwardEnd(py::handle handle, py::handle input,
                              py::handle output) {
  session_.Hook("Session.module_backward_end", [&](client::Session& session) {
    Call* call = session_.Open(handle);
    if (call == nullptr) return;
    call->open = false;
    session.CheckEnd(&call->plan);
    values_.WriteBackward(session, call->plan, input, output);
    session.EndCall(call->plan);
  });
}

bool ModuleCalls::ParamGrad(py::handle base, py::handle name, py::handle grad) {
  return session_.Hook(
      "Session.param_grad",
      [&](client::Session& session) {
        std::string_view text, param;
        client::CallPlan plan;
        if (!Text(base, &text) || !Text(name, &param) ||
            !session.BeginParamGrad(text, param, &plan)) {
          return false;
        }
        client::EntryBuilder entry(session.recorder());
        ValueWriter& body = entry.Extra();
        body.Key(param);
        body.BeginList();
        values_.Encode(entry, grad, body);
        body.End();
        return session.WriteEntry(plan, 0, entry);
      },
      false);
}

void ModuleCalls::ReserveParamGrad(py::handle base) {
  session_.Hook("Session.param_grad_due", [&](client::Session& session) {
    std::string_view text;
    if (Text(base, &text)) session.ReserveParamGrad(text);
  });
}

}  // namespace tprobe::python
