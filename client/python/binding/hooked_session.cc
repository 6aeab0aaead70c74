// The client session a tprobe._C.Session's hooks report to, and the handles
// of its calls (hooked_session.h).

#include "client/python/binding/hooked_session.h"

#include "client/naming.h"
#include "client/python/binding/producer_stats.h"

namespace py = pybind11;

namespace tprobe::python {

HookedSession::HookedSession(std::unique_ptr<client::Session> session)
    : session_(std::move(session)) {}

HookedSession::~HookedSession() { Release(); }

void HookedSession::Plan(client::CallPlan&& plan, ApiCall* call) const {
  call->plan = std::move(plan);
  Plan(call);
}

void HookedSession::Plan(ApiCall* call) const {
  const client::CallPlan& plan = call->plan;
  call->entry = plan.entry() || plan.stack();
  call->input = plan.input;
  call->backward = session_->WantsBackward();
}

py::object HookedSession::Handle(client::CallPlan&& plan) const {
  Call call;
  call.owner = this;
  Plan(std::move(plan), &call);
  return py::cast(std::move(call));
}

Call* HookedSession::Open(py::handle handle) const {
  if (!session_ || !py::isinstance<Call>(handle)) return nullptr;
  Call& call = handle.cast<Call&>();
  return call.open && call.owner == this ? &call : nullptr;
}

void HookedSession::Release() {
  if (!session_) return;
  FollowStatisticsOn(nullptr);
  if (client::InForkedChild()) {
    (void)session_.release();
    return;
  }
  session_.reset();
}

}  // namespace tprobe::python
