// The public C++ Client (client/include/tprobe/client.h) over a Session.
// Naming, filters and levels are the Session's; this file turns TensorData
// and Value into the entry's value tree. Every entry point catches
// everything: no exception crosses the API.
//
// Ring order: the daemon resolves an entry's tensor refs against the tensors
// sent since the previous entry of the ring, so an entry's tensors must not
// be separated from it by another entry. API calls have no recorded
// children (the outermost rule), so their tensors go into the ring at once.
// A module call's children write entries before it ends, so its tensors are
// copied aside and sent just before its entry.

#include "tprobe/client.h"

#include <atomic>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "client/naming.h"
#include "client/session.h"
#include "common/dtype.h"
#include "common/dump/tree_writer.h"
#include "common/record/record.h"
#include "tprobe/v1/value.pb.h"

namespace tprobe {

static_assert(static_cast<int>(TensorType::kComplex128) ==
              static_cast<int>(DType::kComplex128));
static_assert(static_cast<int>(TensorType::kBool) ==
              static_cast<int>(DType::kBool));
static_assert(static_cast<int>(ModuleStyle::kCell) ==
              static_cast<int>(client::ModuleStyle::kCell));

namespace {

// msprobe's limit on nesting (Const.DUMP_MAX_DEPTH).
constexpr int kMaxDepth = 400;

// A module call's tensor, kept until its entry is written.
struct StagedTensor {
  uint32_t ref;
  DType dtype;
  std::vector<int64_t> shape;
  bool requires_grad;
  std::vector<std::byte> bytes;
};

// One call between Begin and End on this thread.
struct OpenCall {
  uint64_t token = 0;
  client::CallPlan plan;
  bool stage = false;  // module call: tensors wait for the entry
  uint32_t stack_id = 0;
  v1::List* inputs = nullptr;   // input_args, or backward input
  v1::Dict* kwargs = nullptr;   // input_kwargs
  v1::List* outputs = nullptr;  // output
  v1::Dict* parameters = nullptr;
  std::vector<StagedTensor> staged;
  v1::Entry entry;
};

thread_local std::vector<std::unique_ptr<OpenCall>> t_open_calls;
std::atomic<uint64_t> g_next_token{1};

// Tensor refs are numbered per thread (each thread has its own ring) and
// never 0.
uint32_t NextRef() {
  thread_local uint32_t next = 1;
  uint32_t ref = next++;
  if (ref == 0) ref = next++;
  return ref;
}

v1::Value* AddItem(v1::Dict* dict, std::string_view key) {
  v1::DictItem* item = dict->add_items();
  item->set_key(std::string(key));
  return item->mutable_value();
}

OpenCall* FindCall(const Call& call) {
  if (call.token == 0) return nullptr;
  for (auto it = t_open_calls.rbegin(); it != t_open_calls.rend(); ++it) {
    if ((*it)->token == call.token) return it->get();
  }
  return nullptr;
}

// Bytes a well-formed tensor of this shape and dtype holds, or -1 when the
// dtype is unknown or a size negative.
int64_t ExpectedBytes(const TensorData& t) {
  if (static_cast<int>(t.dtype) >= kDTypeCount) return -1;
  if (t.ndim > record::kMaxDims || (t.ndim > 0 && t.shape == nullptr)) {
    return -1;
  }
  int64_t n = 1;
  for (size_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) return -1;
    n *= t.shape[i];
  }
  return n * static_cast<int64_t>(ElementSize(static_cast<DType>(t.dtype)));
}

// Fills the tensor slots of one call's value tree.
// The next positional slot of `section` in the call's entry (parameters are
// named by position), or nullptr when data_mode leaves that side out.
v1::Value* NextSlot(OpenCall* open, Section section) {
  if (section == Section::kParameter) {
    if (open->parameters == nullptr) return nullptr;
    return AddItem(open->parameters,
                   std::to_string(open->parameters->items_size()));
  }
  v1::List* list = section == Section::kInput ? open->inputs : open->outputs;
  return list == nullptr ? nullptr : list->add_items();
}

class TensorSink {
 public:
  TensorSink(client::Core& core, OpenCall* call) : core_(core), call_(call) {}

  // Sends (or stages) `t` and points `slot` at it. A malformed tensor is
  // null. Returns false when it was not recorded.
  bool Put(const TensorData& t, v1::Value* slot) {
    const int64_t expected = ExpectedBytes(t);
    if (expected < 0 || static_cast<uint64_t>(expected) != t.nbytes ||
        (t.nbytes > 0 && t.data == nullptr)) {
      slot->set_null(true);
      return false;
    }
    const uint32_t ref = NextRef();
    slot->set_tensor_ref(ref);
    const auto dtype = static_cast<DType>(t.dtype);
    if (call_ != nullptr && call_->stage) {
      StagedTensor& s = call_->staged.emplace_back();
      s.ref = ref;
      s.dtype = dtype;
      s.shape.assign(t.shape, t.shape + t.ndim);
      s.requires_grad = t.requires_grad;
      s.bytes.resize(t.nbytes);
      if (t.nbytes > 0) std::memcpy(s.bytes.data(), t.data, t.nbytes);
      return true;
    }
    return core_.WriteTensor(ref, dtype,
                             std::span<const int64_t>(t.shape, t.ndim),
                             t.requires_grad, t.data, t.nbytes);
  }

  // Converts a public Value into the value tree, sending its tensors.
  bool Convert(const Value& value, v1::Value* out, int depth) {
    if (depth > kMaxDepth) {
      out->set_null(true);
      return false;
    }
    bool ok = true;
    switch (value.kind()) {
      case Value::Kind::kNull:
        out->set_null(true);
        break;
      case Value::Kind::kBool:
        out->set_bool_value(value.bool_value());
        break;
      case Value::Kind::kInt:
        out->set_int_value(value.int_value());
        break;
      case Value::Kind::kFloat:
        out->set_float_value(value.float_value());
        break;
      case Value::Kind::kStr:
        out->set_str_value(value.text());
        break;
      case Value::Kind::kList: {
        v1::List* list = out->mutable_list();
        for (const Value& item : value.items()) {
          ok &= Convert(item, list->add_items(), depth + 1);
        }
        break;
      }
      case Value::Kind::kDict: {
        v1::Dict* dict = out->mutable_dict();
        const auto& keys = value.keys();
        const auto& items = value.items();
        for (size_t i = 0; i < keys.size() && i < items.size(); ++i) {
          ok &= Convert(items[i], AddItem(dict, keys[i]), depth + 1);
        }
        break;
      }
      case Value::Kind::kTyped: {
        v1::Typed* typed = out->mutable_typed();
        typed->set_type(value.text());
        if (value.items().empty()) {
          typed->mutable_value()->set_null(true);
        } else {
          ok &= Convert(value.items()[0], typed->mutable_value(), depth + 1);
        }
        break;
      }
      case Value::Kind::kTensor:
        ok &= Put(value.tensor(), out);
        break;
    }
    return ok;
  }

 private:
  client::Core& core_;
  OpenCall* call_;
};

// Sets up the keys of a recorded call's entry in msprobe's order, leaving
// out the ones data_mode removes.
void LayOutEntry(OpenCall* call) {
  const client::CallPlan& plan = call->plan;
  v1::Dict* body = call->entry.mutable_body();
  if (!plan.forward) {
    if (plan.input) call->inputs = AddItem(body, "input")->mutable_list();
    if (plan.output) call->outputs = AddItem(body, "output")->mutable_list();
    return;
  }
  if (plan.input) {
    call->inputs = AddItem(body, "input_args")->mutable_list();
    call->kwargs = AddItem(body, "input_kwargs")->mutable_dict();
  }
  if (plan.output) call->outputs = AddItem(body, "output")->mutable_list();
  if (plan.output && plan.kind == record::CallKind::kModule) {
    call->parameters = AddItem(body, "parameters")->mutable_dict();
  }
}

// Drops the output side (output, parameters) of an entry whose outputs did
// not pass scope and list when the call ended (Session::CheckEnd).
void DropOutputSide(v1::Dict* body) {
  auto* items = body->mutable_items();
  for (int i = items->size() - 1; i >= 0; --i) {
    const std::string& key = items->Get(i).key();
    if (key == "output" || key == "parameters") items->DeleteSubrange(i, 1);
  }
}

}  // namespace

class Client::Impl {
 public:
  explicit Impl(std::unique_ptr<client::Session> session)
      : session(std::move(session)) {}
  std::unique_ptr<client::Session> session;

  // Opens the call the session planned; a default Call when it did not.
  Call Open(bool began, client::CallPlan plan) {
    if (!began) return Call{};
    auto call = std::make_unique<OpenCall>();
    call->token = g_next_token.fetch_add(1, std::memory_order_relaxed);
    call->stage = plan.kind == record::CallKind::kModule;
    call->plan = std::move(plan);
    if (call->plan.entry()) LayOutEntry(call.get());
    Call handle{call->token, call->plan.index, call->plan.entry()};
    t_open_calls.push_back(std::move(call));
    return handle;
  }

  // Writes the call's staged tensors and its entry.
  void WriteEntry(OpenCall* call) {
    client::Core& core = session->core();
    for (const StagedTensor& t : call->staged) {
      core.WriteTensor(t.ref, t.dtype, t.shape, t.requires_grad, t.bytes.data(),
                       t.bytes.size());
    }
    session->WriteEntry(call->plan, call->stack_id, call->entry);
  }

  // Closes the innermost open call of this thread; writes its entry when
  // `write`.
  void CloseInnermost(bool write) {
    std::unique_ptr<OpenCall> call = std::move(t_open_calls.back());
    t_open_calls.pop_back();
    if (write) {
      const bool had_output = call->plan.output;
      session->CheckEnd(&call->plan);
      if (had_output && !call->plan.output) {
        DropOutputSide(call->entry.mutable_body());
      }
      if (call->plan.entry()) {
        WriteEntry(call.get());
      } else if (call->plan.stack()) {
        session->WriteEntry(call->plan, call->stack_id, v1::Entry());
      }
    }
    session->EndCall(call->plan);
  }
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() {
  try {
    impl_.reset();
  } catch (...) {
  }
}

std::unique_ptr<Client> Client::Create(const ClientOptions& options,
                                       std::string* error) {
  try {
    client::SessionOptions so;
    so.config_path = options.config_path;
    so.dump_path = options.dump_path;
    so.socket_path = options.socket_path;
    so.rank = options.rank;
    so.autostart_daemon = options.autostart_daemon;
    so.daemon_path = options.daemon_path;
    so.connect_timeout_ms = options.connect_timeout_ms;
    auto session = client::Session::Create(so);
    if (!session.ok()) {
      if (error) *error = session.status().message();
      return nullptr;
    }
    return std::unique_ptr<Client>(
        new Client(std::make_unique<Impl>(std::move(session).value())));
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return nullptr;
  } catch (...) {
    if (error) *error = "unknown error";
    return nullptr;
  }
}

void Client::Start() {
  try {
    impl_->session->Start();
  } catch (...) {
  }
}

void Client::Stop() {
  try {
    impl_->session->Stop();
  } catch (...) {
  }
}

void Client::Step() {
  try {
    impl_->session->Step();
  } catch (...) {
  }
}

uint32_t Client::current_step() const { return impl_->session->step(); }

bool Client::connected() const { return impl_->session->connected(); }

std::string Client::dump_dir() const {
  try {
    const client::Session& s = *impl_->session;
    return dump::StepRankDir(s.config().dump_path, s.step(), s.rank());
  } catch (...) {
    return std::string();
  }
}

ClientCounters Client::counters() const {
  client::Core& core = impl_->session->core();
  ClientCounters c;
  c.records_written = core.records_written();
  c.dropped_no_daemon = core.dropped_no_daemon();
  c.dropped_ring_full = core.dropped(shm::DropReason::kRingFull);
  c.dropped_too_large = core.dropped(shm::DropReason::kTooLarge);
  return c;
}

Call Client::BeginModuleCall(ModuleStyle style, std::string_view path,
                             std::string_view class_name, Direction direction,
                             uint32_t forward_index) {
  try {
    client::Session& s = *impl_->session;
    if (!s.collecting()) return Call{};
    const std::string base = client::ModuleBase(
        static_cast<client::ModuleStyle>(style), path, class_name);
    client::CallPlan plan;
    const bool began = s.BeginModule(base, direction == Direction::kForward,
                                     forward_index, &plan);
    return impl_->Open(began, std::move(plan));
  } catch (...) {
    return Call{};
  }
}

Call Client::BeginModule(std::string_view path, std::string_view class_name,
                         Direction direction, uint32_t forward_index) {
  return BeginModuleCall(ModuleStyle::kModule, path, class_name, direction,
                         forward_index);
}

Call Client::BeginCell(std::string_view path, std::string_view class_name,
                       Direction direction, uint32_t forward_index) {
  return BeginModuleCall(ModuleStyle::kCell, path, class_name, direction,
                         forward_index);
}

Call Client::BeginApi(std::string_view prefix, std::string_view api,
                      Direction direction, uint32_t forward_index) {
  try {
    client::Session& s = *impl_->session;
    if (!s.step_active()) return Call{};
    const std::string base = client::ApiBase(prefix, api);
    client::CallPlan plan;
    const bool began = s.BeginApi(base, direction == Direction::kForward,
                                  forward_index, &plan);
    return impl_->Open(began, std::move(plan));
  } catch (...) {
    return Call{};
  }
}

bool Client::AddTensor(const Call& call, Section section,
                       const TensorData& tensor) {
  try {
    OpenCall* open = FindCall(call);
    if (open == nullptr || !open->plan.entry()) return false;
    v1::Value* slot = NextSlot(open, section);
    if (slot == nullptr) return false;
    return TensorSink(impl_->session->core(), open).Put(tensor, slot);
  } catch (...) {
    return false;
  }
}

bool Client::AddValue(const Call& call, Section section, const Value& value) {
  try {
    OpenCall* open = FindCall(call);
    if (open == nullptr || !open->plan.entry()) return false;
    v1::Value* slot = NextSlot(open, section);
    if (slot == nullptr) return false;
    return TensorSink(impl_->session->core(), open).Convert(value, slot, 0);
  } catch (...) {
    return false;
  }
}

bool Client::AddKwarg(const Call& call, std::string_view key,
                      const Value& value) {
  try {
    OpenCall* open = FindCall(call);
    if (open == nullptr || open->kwargs == nullptr) return false;
    TensorSink sink(impl_->session->core(), open);
    return sink.Convert(value, AddItem(open->kwargs, key), 0);
  } catch (...) {
    return false;
  }
}

bool Client::AddParameter(const Call& call, std::string_view name,
                          const TensorData& tensor) {
  try {
    OpenCall* open = FindCall(call);
    if (open == nullptr || open->parameters == nullptr) return false;
    TensorSink sink(impl_->session->core(), open);
    return sink.Put(tensor, AddItem(open->parameters, name));
  } catch (...) {
    return false;
  }
}

bool Client::AddStack(const Call& call, const std::vector<std::string>& lines) {
  try {
    OpenCall* open = FindCall(call);
    if (open == nullptr || !open->plan.stack()) return false;
    std::string joined;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i > 0) joined.push_back('\0');
      joined += lines[i];
    }
    open->stack_id =
        impl_->session->core().Intern(record::InternKind::kStack, joined);
    return open->stack_id != 0;
  } catch (...) {
    return false;
  }
}

void Client::EndCall(const Call& call) {
  try {
    if (FindCall(call) == nullptr) return;
    // Calls close innermost first; any left open inside this one are closed
    // without their entries.
    while (t_open_calls.back()->token != call.token) {
      impl_->CloseInnermost(/*write=*/false);
    }
    impl_->CloseInnermost(/*write=*/true);
  } catch (...) {
  }
}

bool Client::ParamGrad(std::string_view path, std::string_view class_name,
                       std::string_view name, const TensorData& grad,
                       ModuleStyle style) {
  try {
    client::Session& s = *impl_->session;
    if (!s.collecting()) return false;
    // Its entry would come between an open API call's tensors and its entry.
    if (!t_open_calls.empty() &&
        t_open_calls.back()->plan.kind == record::CallKind::kApi) {
      return false;
    }
    const std::string base = client::ModuleBase(
        static_cast<client::ModuleStyle>(style), path, class_name);
    client::CallPlan plan;
    if (!s.BeginParamGrad(base, name, &plan)) return false;
    v1::Entry entry;
    v1::List* grads = AddItem(entry.mutable_body(), name)->mutable_list();
    TensorSink sink(s.core(), nullptr);
    const bool sent = sink.Put(grad, grads->add_items());
    return s.WriteEntry(plan, 0, entry) && sent;
  } catch (...) {
    return false;
  }
}

}  // namespace tprobe
