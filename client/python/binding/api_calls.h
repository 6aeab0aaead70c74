// A tprobe._C.Session's API calls (py_session.h): from the Python hooks
// (Session.api_begin, api_inputs, api_end, api_backward) and, as its
// ApiSession, from api_hook.cc's ApiWrapper, whose path runs no Python
// frame. The session names, counts and filters each call; this records
// what the hooks saw into its entries.
//
// Thread safety: every member needs the GIL.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_API_CALLS_H_
#define TPROBE_CLIENT_PYTHON_BINDING_API_CALLS_H_

#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string_view>

#include "client/python/binding/api_hook.h"
#include "client/python/binding/entry_values.h"
#include "client/python/binding/hooked_session.h"

namespace tprobe::python {

class ApiCalls final : public ApiSession {
 public:
  ApiCalls(HookedSession& session, EntryValues& values);

  // Session.api_begin: the handle of an outermost API forward call named
  // `base` (a Call), or None when it is not recorded.
  pybind11::object Begin(pybind11::handle base);
  // Session.api_inputs: takes the open call's stack and, when data_mode
  // keeps them, its inputs (before the API runs).
  void Inputs(pybind11::handle handle, pybind11::handle args,
              pybind11::handle kwargs);
  // Session.api_end: writes the call's entry with `output` (none for
  // NoEntry()) and closes it.
  void End(pybind11::handle handle, pybind11::handle output);
  // Session.api_backward: the backward of forward call `index` of `base`.
  void Backward(pybind11::handle base, int64_t index, pybind11::handle input,
                pybind11::handle output);

  bool BeginApiCall(std::string_view base, client::ApiSite* site,
                    ApiCall* call) override;
  void TakeApiInputs(ApiCall& call, const CallArgs& args) override;
  void EndApiCall(ApiCall& call, PyObject* output) override;
  void ApiCallBackward(PyObject* base, int64_t index, PyObject* input,
                       PyObject* output) override;

 private:
  // Takes the call's stack and, when data_mode keeps them, its inputs,
  // encoded by `encode(args_bytes, kwargs_bytes)`.
  template <typename EncodeInputs>
  void TakeInputs(ApiCall& call, EncodeInputs encode);

  HookedSession& session_;
  EntryValues& values_;
};

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_API_CALLS_H_
