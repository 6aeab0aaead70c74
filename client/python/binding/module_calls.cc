// tprobe._C.Session's module (and Cell) calls: forward, backward and
// parameter gradients (py_session.h).

#include <utility>

#include "client/python/binding/call_stack.h"
#include "client/python/binding/py_session.h"

namespace py = pybind11;

namespace tprobe::python {

using client::Part;
using record::ValueWriter;

py::object PySession::ModuleBegin(py::handle base) {
  return BeginModuleCall("Session.module_begin", base, true, 0);
}

// A module call began (its forward pre-hook): lists its stack and writes the
// input side of its entry (input_args, input_kwargs), as msprobe 26.x does
// there.
void PySession::ModuleInputs(py::handle handle, py::handle args,
                             py::handle kwargs) {
  Hook("Session.module_inputs", [&] {
    const Call* call = Open(handle);
    if (call == nullptr || !call->plan.stack()) return;
    const client::CallPlan& plan = call->plan;
    client::EntryBuilder entry(session_->core());
    if (plan.input) {
      EncodeInto(entry, args, entry.Whole(Part::kInputArgs));
      if (PyDict_Check(kwargs.ptr())) {
        EncodeInto(entry, kwargs, entry.Whole(Part::kInputKwargs));
      } else {
        entry.Open(Part::kInputKwargs);
      }
    }
    // With an empty body the record only lists the stack.
    session_->WriteEntry(plan, CapturedStackId(), entry);
  });
}

// The module call ended (its forward hook): writes the output side of its
// entry (output, parameters) when scope, list and data_mode keep it, and
// closes the call.
void PySession::ModuleEnd(py::handle handle, py::handle output,
                          py::handle parameters) {
  Hook("Session.module_end", [&] {
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
          EncodeInto(entry, v, params);
        }
      }
      session_->WriteEntry(plan, 0, entry);
    }
    session_->EndCall(plan);
  });
}

// A module's backward begins (its output gradients arrived): returns its
// handle, None when it is not recorded (else module_backward_end must
// follow).
py::object PySession::ModuleBackwardBegin(py::handle base, int64_t index) {
  return BeginModuleCall("Session.module_backward_begin", base, false,
                         static_cast<uint32_t>(index));
}

py::object PySession::BeginModuleCall(const char* where, py::handle base,
                                      bool forward, uint32_t index) {
  return Hook(
      where,
      [&]() -> py::object {
        std::string_view text;
        client::CallPlan plan;
        if (!Text(base, &text) ||
            !session_->BeginModule(text, forward, index, &plan)) {
          return py::none();
        }
        return Handle(std::move(plan));
      },
      py::none());
}

// The module's backward is done: writes its entry and closes it.
void PySession::ModuleBackwardEnd(py::handle handle, py::handle input,
                                  py::handle output) {
  Hook("Session.module_backward_end", [&] {
    Call* call = Open(handle);
    if (call == nullptr) return;
    call->open = false;
    session_->CheckEnd(&call->plan);
    WriteBackward(call->plan, input, output);
    session_->EndCall(call->plan);
  });
}

bool PySession::ParamGrad(py::handle base, py::handle name, py::handle grad) {
  return Hook(
      "Session.param_grad",
      [&] {
        std::string_view text, param;
        client::CallPlan plan;
        if (!Text(base, &text) || !Text(name, &param) ||
            !session_->BeginParamGrad(text, param, &plan)) {
          return false;
        }
        client::EntryBuilder entry(session_->core());
        ValueWriter& body = entry.Extra();
        body.Key(param);
        body.BeginList();
        EncodeInto(entry, grad, body);
        body.End();
        return session_->WriteEntry(plan, 0, entry);
      },
      false);
}

}  // namespace tprobe::python
