// A tprobe._C.Session's config as Python reads it (config_view.h).

#include "client/python/binding/config_view.h"

#include <string>
#include <vector>

#include "client/recorder.h"
#include "common/config/config.h"

namespace py = pybind11;

namespace tprobe::python {
namespace {

py::list ToList(const std::vector<std::string>& v) {
  py::list l;
  for (const auto& s : v) l.append(s);
  return l;
}

}  // namespace

bool ConfigView::Selects(int64_t step) const {
  const client::Session* session = session_.get();
  if (session == nullptr) return false;
  const config::Config& config = session->config();
  return config::StepSelected(config, step) &&
         config::RankSelected(config, session->rank());
}

std::string ConfigView::level() const {
  const client::Session* session = session_.get();
  return session ? std::string(config::LevelName(session->config().level))
                 : std::string();
}

std::string ConfigView::task() const {
  const client::Session* session = session_.get();
  return session ? std::string(config::TaskName(session->config().task))
                 : std::string();
}

std::string ConfigView::dump_path() const {
  const client::Session* session = session_.get();
  return session ? session->config().dump_path : std::string();
}

py::object ConfigView::last_step() const {
  client::Session* session = session_.get();
  if (session == nullptr || session->recorder().directive() != 0) {
    return py::none();
  }
  auto last = config::LastStep(session->config());
  return last ? py::object(py::int_(*last)) : py::object(py::none());
}

py::list ConfigView::scope() const {
  const client::Session* session = session_.get();
  return ToList(session ? session->config().scope : config::Config().scope);
}

py::list ConfigView::name_list() const {
  const client::Session* session = session_.get();
  return ToList(session ? session->config().list : config::Config().list);
}

py::dict ConfigView::data_mode() const {
  const client::Session* session = session_.get();
  const config::DataMode m =
      session ? session->config().data_mode : config::DataMode();
  py::dict d;
  d["forward"] = m.forward;
  d["backward"] = m.backward;
  d["input"] = m.input;
  d["output"] = m.output;
  return d;
}

}  // namespace tprobe::python
