// The step boundaries of a step like the last one, in C.
//
// Training loops call start(), stop() and step() at every step. Each runs
// cold, after the step's forward, backward and optimizer: every Python
// function and pybind11 dispatch it touches comes back from memory, about
// 50 us a step on a small model. Most steps are like the one before: not
// selected after one that was not, recorded after one that was.
// tprobe._C.SteadySteps lets the debugger skip its own work there. The
// debugger arms it at the end of a start() after which its Python state
// would not change at the next boundaries of a step like this one (hooks
// suspended or in as the step records, no dump_enable to poll, ...); it
// keeps whether the step records (the Runtime's `on`). Then start(model),
// stop() and step() go straight to the session's StartIfSelected, Stop and
// StepIfStopped (py_session.h), set `on` as the debugger would, and return
// True; or they return False, having done nothing, where the debugger must
// take its own path:
//   - start(model): `model` is not the one armed with (None included), the
//     step's selection is not the armed step's, or the configured steps are
//     over;
//   - stop(): the step's collecting is not the armed step's;
//   - step(): stop() was not called, a live config is offered, or a dict
//     the debugger gave to watch changed size (the framework's own state
//     to look at: Dynamo's counters of graph breaks, for PyTorch);
// and each of them once the Runtime's session or that session's config is
// not the one armed with.
// Nothing here raises into training but a call with the wrong arguments.
//
// Thread safety: called with the GIL held, from the training thread.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_STEADY_STEPS_H_
#define TPROBE_CLIENT_PYTHON_BINDING_STEADY_STEPS_H_

#include <Python.h>
#include <pybind11/pybind11.h>

namespace tprobe::python {

// Adds SteadySteps to the module.
void DefineSteadySteps(pybind11::module_& m);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_STEADY_STEPS_H_
