// A tprobe._C.Session's API calls (api_calls.h).

#include "client/python/binding/api_calls.h"

#include <memory>
#include <string>
#include <utility>

#include "client/python/binding/call_stack.h"
#include "client/recorder.h"
#include "client/thread_slot.h"

namespace py = pybind11;

namespace tprobe::python {

using client::Part;

namespace {

// This thread's builder of API entries, kept between calls with its
// buffers' capacity (an entry then allocates nothing), lent to one entry
// at a time: a nested one (none is expected: the call's thread is busy)
// gets a builder of its own, and so does a thread that is exiting.
class PooledEntry {
 public:
  explicit PooledEntry(client::Recorder& core)
      : pool_(client::ThreadSlot<Pool>::Get()) {
    if (pool_ == nullptr || pool_->lent) {
      pool_ = nullptr;
      own_ = std::make_unique<client::EntryBuilder>(core);
      entry_ = own_.get();
      return;
    }
    if (pool_->entry == nullptr || &pool_->entry->recorder() != &core) {
      pool_->entry = std::make_unique<client::EntryBuilder>(core);
    } else {
      pool_->entry->Reset();
    }
    pool_->lent = true;
    entry_ = pool_->entry.get();
  }
  ~PooledEntry() {
    if (pool_ != nullptr) pool_->lent = false;
  }
  PooledEntry(const PooledEntry&) = delete;
  PooledEntry& operator=(const PooledEntry&) = delete;

  client::EntryBuilder& operator*() { return *entry_; }

 private:
  struct Pool {
    std::unique_ptr<client::EntryBuilder> entry;
    bool lent = false;
  };

  Pool* pool_;  // this thread's, when its builder is lent here
  std::unique_ptr<client::EntryBuilder> own_;
  client::EntryBuilder* entry_;
};

}  // namespace

ApiCalls::ApiCalls(HookedSession& session, EntryValues& values)
    : session_(session), values_(values) {}

py::object ApiCalls::Begin(py::handle base) {
  return GuardHook(
      session_.failures(), "Session.api_begin",
      [&]() -> py::object {
        std::string_view text;
        Call call;
        if (!Text(base, &text) || !BeginApiCall(text, nullptr, &call)) {
          return py::none();
        }
        call.owner = &session_;
        return py::cast(std::move(call));
      },
      py::none());
}

bool ApiCalls::BeginApiCall(std::string_view base, client::ApiSite* site,
                            ApiCall* call) {
  return session_.Hook(
      "Session.api_begin",
      [&](client::Session& session) {
        // Written in place: a reused call keeps its name's capacity.
        if (!session.BeginApi(base, true, 0, &call->plan, site)) return false;
        session_.Plan(call);
        return true;
      },
      false);
}

template <typename EncodeInputs>
void ApiCalls::TakeInputs(ApiCall& call, EncodeInputs encode) {
  session_.Hook("Session.api_inputs", [&](client::Session& session) {
    if (!call.entry) return;
    call.stack_id = InternCapturedStack(session.recorder());
    if (call.plan.input) {
      encode(&call.args, &call.kwargs);
      call.inputs = true;
    }
  });
}

void ApiCalls::Inputs(py::handle handle, py::handle args, py::handle kwargs) {
  Call* call = session_.Open(handle);
  if (call == nullptr) return;
  TakeInputs(*call, [&](std::string* args_bytes, std::string* kwargs_bytes) {
    values_.EncodeAhead(args, args_bytes);
    values_.EncodeAhead(kwargs, kwargs_bytes);
  });
}

void ApiCalls::TakeApiInputs(ApiCall& call, const CallArgs& args) {
  TakeInputs(call, [&](std::string* args_bytes, std::string* kwargs_bytes) {
    values_.EncodeArgumentsAhead(args, args_bytes, kwargs_bytes);
  });
}

void ApiCalls::End(py::handle handle, py::handle output) {
  Call* call = session_.Open(handle);
  if (call == nullptr) return;
  call->open = false;
  EndApiCall(*call, output.is(NoEntry()) ? nullptr : output.ptr());
}

void ApiCalls::EndApiCall(ApiCall& call, PyObject* output) {
  session_.Hook("Session.api_end", [&](client::Session& session) {
    client::CallPlan& plan = call.plan;
    session.CheckEnd(&plan);
    if (output != nullptr) {
      PooledEntry pooled(session.recorder());
      client::EntryBuilder& entry = *pooled;
      if (plan.entry()) {
        if (plan.input && call.inputs) {
          entry.Whole(Part::kInputArgs).Raw(call.args);
          entry.Whole(Part::kInputKwargs).Raw(call.kwargs);
        } else if (plan.input) {
          entry.Whole(Part::kInputArgs).Null();
          entry.Whole(Part::kInputKwargs).Null();
        }
        if (plan.output) {
          values_.EncodeOutput(entry, output, entry.Whole(Part::kOutput));
        }
      }
      // An empty entry lists only the stack (data_mode keeps none of it).
      if (plan.entry() || plan.stack()) {
        session.WriteEntry(plan, call.stack_id, entry);
      }
    }
    session.EndCall(plan);
  });
}

void ApiCalls::ApiCallBackward(PyObject* base, int64_t index, PyObject* input,
                               PyObject* output) {
  Backward(base, index, input, output);
}

void ApiCalls::Backward(py::handle base, int64_t index, py::handle input,
                        py::handle output) {
  session_.Hook("Session.api_backward", [&](client::Session& session) {
    std::string_view text;
    client::CallPlan plan;
    if (!Text(base, &text) ||
        !session.BeginApi(text, false, static_cast<uint32_t>(index), &plan)) {
      return;
    }
    values_.WriteBackward(session, plan, input, output);
    session.EndCall(plan);
  });
}

}  // namespace tprobe::python
