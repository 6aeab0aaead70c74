// tprobe._C.Session, Call and Encoded (session_binding.h).

#include "client/python/binding/session_binding.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "client/naming.h"
#include "client/python/binding/call_stack.h"
#include "client/python/binding/hook_guard.h"
#include "client/python/binding/module_methods.h"
#include "client/python/binding/producer_stats.h"
#include "client/python/binding/py_session.h"

namespace py = pybind11;

namespace tprobe::python {

PySession* PySessionOf(PyObject* object) {
  return GuardHook(
      UnattributedFailures(), "finding the session of the hooks",
      [&]() -> PySession* {
        py::handle h(object);
        if (!py::isinstance<PySession>(h)) return nullptr;
        return &h.cast<PySession&>();
      },
      nullptr);
}

SessionParts SessionPartsOf(PyObject* object) {
  PySession* session = PySessionOf(object);
  if (session == nullptr) return {};
  return {&session->api(), &session->modules()};
}

void DefineSession(py::module_& m) {
  py::enum_<ValueEncoding>(m, "ValueEncoding",
                           "How a session encodes the values its hooks saw "
                           "(msprobe writes each framework's differently).")
      .value("TORCH", ValueEncoding::kTorch)
      .value("MINDSPORE", ValueEncoding::kMindSpore);

  py::class_<Encoded>(m, "Encoded",
                      "A value encoded ahead of its entry (Session.encode).");

  py::class_<Call> call(m, "Call",
                        "One open call (Session.*_begin): handed back to "
                        "the matching *_end, which ends it once. Read-only: "
                        "entry, input, backward, index.");

  py::class_<Stack, std::shared_ptr<Stack>>(
      m, "Stack",
      "A call's stack given whole, for Session.module_open: frames "
      "innermost first, each (path, line or None, function, source text "
      "or None), formatted and filtered as the running code's would be (a "
      "compiled graph's call, as Dynamo traced it); false when no line is "
      "left.")
      .def(py::init(&MakeStack), py::arg("frames"))
      .def("__bool__", [](const Stack& s) { return !s.text.empty(); });

  py::class_<PySession> session(m, "Session");
  session
      .def(py::init([](std::string config_path, std::string dump_path,
                       std::string socket_path, int rank, bool autostart_daemon,
                       std::string daemon_path, int connect_timeout_ms,
                       std::string framework, ValueEncoding encoding,
                       bool risk_level_applies) {
             PySessionArgs args;
             args.config_path = std::move(config_path);
             args.dump_path = std::move(dump_path);
             args.socket_path = std::move(socket_path);
             args.rank = rank;
             args.autostart_daemon = autostart_daemon;
             args.daemon_path = std::move(daemon_path);
             args.connect_timeout_ms = connect_timeout_ms;
             args.framework = std::move(framework);
             args.encoding = encoding;
             args.risk_level_applies = risk_level_applies;
             return std::make_unique<PySession>(args);
           }),
           py::arg("config_path") = "", py::arg("dump_path") = "",
           py::arg("socket_path") = "", py::arg("rank") = -1,
           py::arg("autostart_daemon") = true, py::arg("daemon_path") = "",
           py::arg("connect_timeout_ms") = 5000,
           py::arg("framework") = "pytorch",
           py::arg("encoding") = ValueEncoding::kTorch,
           py::arg("risk_level_applies") = true,
           "One rank's dump session. framework: msprobe's name of the "
           "framework (written into the entries); encoding: how its values "
           "are encoded (ValueEncoding); risk_level_applies: msprobe's "
           "risk_level filters its API calls (PyTorch's). Raises ValueError "
           "for a bad config.")
      .def("close", &PySession::Close)
      .def("start", &PySession::Start)
      .def("stop", &PySession::Stop)
      .def("step", &PySession::Step)
      .def(
          "write_producer_stats",
          [](PySession& s, py::bytes values, py::bytes places) {
            return WriteProducerStatsFromPython(s.session().get(), values,
                                                places);
          },
          py::arg("values"), py::arg("places"),
          "Writes the statistics the framework computed (producer_stats.h) "
          "into this thread's ring: values, 4 uint64 per tensor; places, "
          "24 bytes per tensor. Returns how many were written.")
      .def(
          "write_producer_bytes",
          [](PySession& s, const py::list& copies, py::bytes places) {
            return WriteProducerBytesFromPython(s.session().get(), copies,
                                                places);
          },
          py::arg("copies"), py::arg("places"),
          "Writes the bytes of tensors the framework copied to the host "
          "(tasks tensor and overflow_check, producer_stats.h) into this "
          "thread's ring: copies, (address, size) of host memory per "
          "tensor, kept alive by the caller; places, 24 bytes per tensor. "
          "Returns how many were written whole.")
      .def("set_step", &PySession::SetStep, py::arg("step"),
           "Makes step the current step number (msprobe's set_init_step).")
      .def("dump_alone_at_l1", &PySession::DumpAloneAtL1, py::arg("base"),
           "msprobe's module_dump at level L1: the module named base "
           "(Session.module_base) is recorded as a module, without a "
           "construct node, although L1 records no other.")
      .def("note_no_model", &PySession::NoteNoModel,
           "start() got no model at a module level (L0, mix), and the "
           "adapter said so: a step that writes no entry gives that cause "
           "(tprobe.json why_empty \"no_model\").")
      .def("configure", &PySession::Configure, py::arg("config_path"),
           "Gives this rank alone the config.json at config_path, as a live "
           "`tprobe configure` would (msprobe's dump_enable reload): taken "
           "up at once before start(), else at the next step(). Returns \"\" "
           "once the daemon took it, else why not.")
      .def("begin_group", &PySession::BeginGroup, py::arg("name"),
           "Level mix: the calls until end_group() are inside the construct "
           "node `name` (msprobe's \"optimizer\", \"clip_grad\").")
      .def("end_group", &PySession::EndGroup)
      .def_property_readonly("collecting", &PySession::collecting)
      .def(
          "selects",
          [](const PySession& s, int64_t step) {
            return s.config().Selects(step);
          },
          py::arg("step"),
          "Whether the config's step and rank lists take `step` of this "
          "rank.")
      .def_property_readonly("connected", &PySession::connected)
      .def_property_readonly("current_step", &PySession::step)
      .def_property_readonly("rank", &PySession::rank)
      .def_property_readonly(
          "level", [](const PySession& s) { return s.config().level(); })
      .def_property_readonly(
          "task", [](const PySession& s) { return s.config().task(); })
      .def_property_readonly(
          "dump_path",
          [](const PySession& s) { return s.config().dump_path(); })
      .def_property_readonly(
          "last_step",
          [](const PySession& s) { return s.config().last_step(); },
          "max(step) of the config; None: every step, or a live "
          "directive is in force")
      .def_property_readonly(
          "scope", [](const PySession& s) { return s.config().scope(); })
      .def_property_readonly(
          "list", [](const PySession& s) { return s.config().name_list(); })
      .def_property_readonly(
          "data_mode",
          [](const PySession& s) { return s.config().data_mode(); })
      .def("counters", &PySession::counters)
      .def("flush", &PySession::Flush, py::arg("timeout_ms") = 10000)
      .def_static(
          "module_base",
          [](const std::string& path, const std::string& cls, bool cell) {
            return client::ModuleBase(cell ? client::ModuleStyle::kCell
                                           : client::ModuleStyle::kModule,
                                      path, cls);
          },
          py::arg("path"), py::arg("cls"), py::arg("cell") = false,
          "'Module.{path}.{cls}' (or 'Cell.…'): the name base of a module.")
      .def_static(
          "api_base",
          [](const std::string& prefix, const std::string& api) {
            return client::ApiBase(prefix, api);
          },
          py::arg("prefix"), py::arg("api"),
          "'{prefix}.{last dotted part of api}': the name base of an API.")
      .def(
          "module_begin",
          [](PySession& s, py::handle base) { return s.modules().Begin(base); },
          py::arg("base"),
          "Opens a module forward call; returns its Call (None: not "
          "recorded, else module_end must follow).")
      .def(
          "module_inputs",
          [](PySession& s, py::handle call, py::handle args,
             py::handle kwargs) { s.modules().Inputs(call, args, kwargs); },
          py::arg("call"), py::arg("args"), py::arg("kwargs"),
          "Lists the beginning module call's stack (the running code's) "
          "and writes its inputs (if data_mode keeps them).")
      .def(
          "api_begin",
          [](PySession& s, py::handle base) { return s.api().Begin(base); },
          py::arg("base"),
          "Opens an outermost API forward call; returns its Call (None: "
          "not recorded, else api_end must follow on this thread).")
      .def(
          "api_inputs",
          [](PySession& s, py::handle call, py::handle args,
             py::handle kwargs) { s.api().Inputs(call, args, kwargs); },
          py::arg("call"), py::arg("args"), py::arg("kwargs"),
          "Before the API runs: takes its stack (the running code's) and, "
          "if data_mode keeps them, its inputs into the call.")
      .def(
          "api_end",
          [](PySession& s, py::handle call, py::handle output) {
            s.api().End(call, output);
          },
          py::arg("call"), py::arg("output") = NoEntry(),
          "Writes the API call's entry (unless `output` is left out) and "
          "closes it.")
      .def(
          "api_backward",
          [](PySession& s, py::handle base, int64_t index, py::handle input,
             py::handle output) {
            s.api().Backward(base, index, input, output);
          },
          py::arg("base"), py::arg("index"), py::arg("input") = NoEntry(),
          py::arg("output") = NoEntry(),
          "Records the backward of forward call `index` of an API; a side "
          "left out is not written (the entry's other calls add it).")
      .def(
          "param_grad_due",
          [](PySession& s, py::handle base) {
            s.modules().ReserveParamGrad(base);
          },
          py::arg("base"),
          "Holds the place in dump.json of the module's next parameter "
          "gradients, which come later (under torch.compile: after the "
          "compiled backward).")
      .def(
          "encode",
          [](PySession& s, py::handle value) {
            return s.values().EncodeAhead(value);
          },
          py::arg("value"))
      .def(
          "record_entry",
          [](PySession& s, py::handle name, py::handle stack, py::handle body,
             int64_t step) {
            return s.values().RecordEntry(name, stack, body, step);
          },
          py::arg("name"), py::arg("stack"), py::arg("body"),
          py::arg("step") = -1);
  DefineModuleMethods(session, call);
}

}  // namespace tprobe::python
