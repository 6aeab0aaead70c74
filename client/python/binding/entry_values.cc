// Python values into a session's entries (entry_values.h).

#include "client/python/binding/entry_values.h"

#include "client/python/binding/value_encoder.h"
#include "client/recorder.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

// A stack given as a list of lines (record_entry), interned in this
// thread's ring; 0 for None.
uint32_t StackId(client::Recorder& core, py::handle stack) {
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
  return text.Intern(core);
}

}  // namespace

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

py::handle NoEntry() {
  static PyObject* marker =
      PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
  return marker;
}

EntryValues::EntryValues(HookedSession& session, ValueEncoding encoding)
    : session_(session), encoding_(encoding) {}

void EntryValues::Encode(client::EntryBuilder& entry, py::handle obj,
                         record::ValueWriter& out) {
  EncodeValue(entry, obj, out, encoding_, session_.failures());
}

void EntryValues::EncodeOutput(client::EntryBuilder& entry, py::handle output,
                               record::ValueWriter& out) {
  if (PyList_Check(output.ptr()) || PyTuple_Check(output.ptr())) {
    Encode(entry, output, out);
  } else {
    out.BeginList();
    Encode(entry, output, out);
    out.End();
  }
}

void EntryValues::EncodeAhead(py::handle value, std::string* bytes) {
  record::ValueWriter out(bytes);
  client::Session* session = session_.get();
  if (session == nullptr || !session->recorder().attached()) {
    out.Null();
    return;
  }
  client::EntryBuilder entry(session->recorder());
  Encode(entry, value, out);
}

void EntryValues::EncodeArgumentsAhead(const CallArgs& args,
                                       std::string* args_bytes,
                                       std::string* kwargs_bytes) {
  record::ValueWriter args_out(args_bytes);
  record::ValueWriter kwargs_out(kwargs_bytes);
  client::Session* session = session_.get();
  if (session == nullptr || !session->recorder().attached()) {
    args_out.Null();
    kwargs_out.Null();
    return;
  }
  client::EntryBuilder entry(session->recorder());
  EncodeArguments(entry, args, args_out, kwargs_out, encoding_,
                  session_.failures());
}

Encoded EntryValues::EncodeAhead(py::handle value) {
  Encoded e;
  EncodeAhead(value, &e.bytes);
  return e;
}

void EntryValues::WriteBackward(client::Session& session,
                                const client::CallPlan& plan, py::handle input,
                                py::handle output) {
  if (!plan.entry()) return;
  client::EntryBuilder entry(session.recorder());
  if (plan.input && !input.is(NoEntry())) {
    Encode(entry, input, entry.Whole(client::Part::kInput));
  }
  if (plan.output && !output.is(NoEntry())) {
    Encode(entry, output, entry.Whole(client::Part::kOutput));
  }
  if (entry.empty()) return;
  session.WriteEntry(plan, 0, entry);
}

bool EntryValues::RecordEntry(py::handle name, py::handle stack,
                              py::handle body, int64_t step) {
  return session_.Hook(
      "Session.record_entry",
      [&](client::Session& session) {
        client::Recorder& core = session.recorder();
        client::EntryBuilder entry(core);
        if (!core.attached()) return entry.Write(0, 0, 0);  // counts the drop
        std::string_view text;
        if (!Text(name, &text) || !PyDict_Check(body.ptr())) return false;
        record::ValueWriter& items = entry.Extra();
        for (auto [k, v] : py::reinterpret_borrow<py::dict>(body)) {
          items.Key(py::str(k).cast<std::string>());
          if (PyBool_Check(v.ptr())) {
            items.Bool(v.ptr() == Py_True);  // is_recompute
          } else if (py::isinstance<Encoded>(v)) {
            items.Raw(v.cast<Encoded&>().bytes);
          } else {
            Encode(entry, v, items);
          }
        }
        const uint32_t name_id = core.Intern(record::InternKind::kName, text);
        const uint32_t step_no =
            step >= 0 ? static_cast<uint32_t>(step) : session.step();
        return entry.Write(step_no, name_id, StackId(core, stack));
      },
      false);
}

}  // namespace tprobe::python
