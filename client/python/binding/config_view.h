// A tprobe._C.Session's config as Python reads it (py_session.h): the
// properties level, task, dump_path, last_step, scope, list and data_mode,
// and selects(step). Once the session is closed each reads as a default
// config would.
//
// Thread safety: every member needs the GIL.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_CONFIG_VIEW_H_
#define TPROBE_CLIENT_PYTHON_BINDING_CONFIG_VIEW_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "client/python/binding/hooked_session.h"

namespace tprobe::python {

class ConfigView {
 public:
  explicit ConfigView(const HookedSession& session) : session_(session) {}

  // Whether the config's step and rank lists take `step` of this rank
  // (PrecisionDebugger.save(), which needs no start()).
  bool Selects(int64_t step) const;
  std::string level() const;
  std::string task() const;
  std::string dump_path() const;
  // max(step) of the config; None when any later step may still be
  // captured: the config lists no steps, or a live directive (tprobe
  // start/stop) is in force, which overrides the config's steps.
  pybind11::object last_step() const;
  pybind11::list scope() const;
  pybind11::list name_list() const;
  pybind11::dict data_mode() const;

 private:
  const HookedSession& session_;
};

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_CONFIG_VIEW_H_
