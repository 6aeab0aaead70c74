// tprobe._C.Session's API calls, from Python hooks and from api_hook.cc's
// ApiWrapper (ApiSession), values encoded ahead of their entry, and raw
// entries (py_session.h).

#include <utility>

#include "client/core.h"
#include "client/python/binding/call_stack.h"
#include "client/python/binding/py_session.h"

namespace py = pybind11;

namespace tprobe::python {

using client::Part;
using record::ValueWriter;

py::object PySession::ApiBegin(py::handle base) {
  return Hook(
      "Session.api_begin",
      [&]() -> py::object {
        std::string_view text;
        Call call;
        if (!Text(base, &text) || !BeginApiCall(text, &call)) {
          return py::none();
        }
        call.owner = this;
        return py::cast(std::move(call));
      },
      py::none());
}

bool PySession::BeginApiCall(std::string_view base, ApiCall* call) {
  return Hook(
      "Session.api_begin",
      [&] {
        client::CallPlan plan;
        if (!session_->BeginApi(base, true, 0, &plan)) return false;
        Plan(std::move(plan), call);
        return true;
      },
      false);
}

// An API call is about to run: takes its stack and, when data_mode keeps
// them, its inputs into the call.
void PySession::ApiInputs(py::handle handle, py::handle args,
                          py::handle kwargs) {
  Call* call = Open(handle);
  if (call != nullptr) TakeApiInputs(*call, args.ptr(), kwargs.ptr());
}

void PySession::TakeApiInputs(ApiCall& call, PyObject* args, PyObject* kwargs) {
  Hook("Session.api_inputs", [&] {
    if (!call.entry) return;
    call.stack_id = CapturedStackId();
    if (call.plan.input) {
      EncodeAhead(args, &call.args);
      EncodeAhead(kwargs, &call.kwargs);
      call.inputs = true;
    }
  });
}

void PySession::ApiEnd(py::handle handle, py::handle output) {
  Call* call = Open(handle);
  if (call == nullptr) return;
  call->open = false;
  EndApiCall(*call, output.is(NoEntry()) ? nullptr : output.ptr());
}

void PySession::EndApiCall(ApiCall& call, PyObject* output) {
  Hook("Session.api_end", [&] {
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
      if (plan.entry() || plan.stack()) {
        session_->WriteEntry(plan, call.stack_id, entry);
      }
    }
    session_->EndCall(plan);
  });
}

void PySession::ApiCallBackward(PyObject* base, int64_t index, PyObject* input,
                                PyObject* output) {
  ApiBackward(base, index, input, output);
}

void PySession::ApiBackward(py::handle base, int64_t index, py::handle input,
                            py::handle output) {
  Hook("Session.api_backward", [&] {
    std::string_view text;
    client::CallPlan plan;
    if (!Text(base, &text) ||
        !session_->BeginApi(text, false, static_cast<uint32_t>(index), &plan)) {
      return;
    }
    WriteBackward(plan, input, output);
    session_->EndCall(plan);
  });
}

Encoded PySession::Encode(py::handle value) {
  Encoded e;
  EncodeAhead(value, &e.bytes);
  return e;
}

bool PySession::RecordEntry(py::handle name, py::handle stack, py::handle body,
                            int64_t step) {
  return Hook(
      "Session.record_entry",
      [&] {
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
      },
      false);
}

}  // namespace tprobe::python
