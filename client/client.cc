// The public C++ Client (client/include/tprobe/client.h) over a Session.
// Every entry point catches everything: no exception crosses the API.

#include "tprobe/client.h"

#include <string>
#include <vector>

#include "client/session.h"
#include "common/dtype.h"
#include "common/dump/tree_writer.h"
#include "tprobe/v1/value.pb.h"

namespace tprobe {

static_assert(static_cast<int>(TensorType::kComplex128) ==
              static_cast<int>(DType::kComplex128));
static_assert(static_cast<int>(TensorType::kBool) ==
              static_cast<int>(DType::kBool));

namespace {

// One call between Begin and End on this thread.
struct OpenCall {
  uint64_t token;
  uint32_t step;
  uint32_t name_id;
  record::Direction direction;
  uint32_t next_ref = 1;
  v1::List* inputs = nullptr;
  v1::List* outputs = nullptr;
  v1::Dict* parameters = nullptr;
  v1::Entry entry;
};

thread_local std::vector<OpenCall> t_open_calls;
std::atomic<uint64_t> g_next_token{1};

v1::Value* AddItem(v1::Dict* dict, const char* key) {
  v1::DictItem* item = dict->add_items();
  item->set_key(key);
  return item->mutable_value();
}

OpenCall* FindCall(const Call& call) {
  for (auto it = t_open_calls.rbegin(); it != t_open_calls.rend(); ++it) {
    if (it->token == call.token) return &*it;
  }
  return nullptr;
}

}  // namespace

class Client::Impl {
 public:
  explicit Impl(std::unique_ptr<client::Session> session)
      : session(std::move(session)) {}
  std::unique_ptr<client::Session> session;

  bool AddTensorTo(OpenCall* call, v1::Value* slot, const TensorData& t) {
    const uint32_t ref = call->next_ref++;
    slot->set_tensor_ref(ref);
    return session->core().WriteTensor(
        ref, static_cast<DType>(t.dtype),
        std::span<const int64_t>(t.shape, t.ndim), t.requires_grad, t.data,
        t.nbytes);
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

Call Client::BeginModule(std::string_view path, std::string_view class_name,
                         Direction direction) {
  try {
    client::Session& s = *impl_->session;
    const auto level = s.config().level;
    if (!s.collecting() || level == config::Level::kL1) return Call{};
    const std::string prefix =
        "Module." + std::string(path) + "." + std::string(class_name) + ".";
    const bool forward = direction == Direction::kForward;
    const uint32_t index = s.NextIndex(prefix + (forward ? "f" : "b"));
    const std::string name = prefix + (forward ? "forward." : "backward.") +
                             std::to_string(index);
    client::Core& core = s.core();
    const uint32_t name_id = core.Intern(record::InternKind::kName, name);
    if (name_id == 0) return Call{};
    const auto dir = forward ? record::Direction::kForward
                             : record::Direction::kBackward;
    core.WriteCall(true, s.step(), name_id, record::CallKind::kModule, dir);
    OpenCall call{g_next_token.fetch_add(1), s.step(), name_id, dir};
    v1::Dict* body = call.entry.mutable_body();
    if (forward) {
      call.inputs = AddItem(body, "input_args")->mutable_list();
      AddItem(body, "input_kwargs")->mutable_dict();
      call.outputs = AddItem(body, "output")->mutable_list();
      call.parameters = AddItem(body, "parameters")->mutable_dict();
      AddItem(body, "is_recompute")->set_bool_value(false);
    } else {
      call.inputs = AddItem(body, "input")->mutable_list();
      call.outputs = AddItem(body, "output")->mutable_list();
    }
    t_open_calls.push_back(std::move(call));
    return Call{t_open_calls.back().token};
  } catch (...) {
    return Call{};
  }
}

bool Client::AddTensor(const Call& call, Section section,
                       const TensorData& tensor) {
  try {
    OpenCall* open = FindCall(call);
    if (open == nullptr) return false;
    if (section == Section::kParameter) {
      return AddParameter(call, std::to_string(open->parameters
                                                   ? open->parameters->items_size()
                                                   : 0),
                          tensor);
    }
    v1::List* list = section == Section::kInput ? open->inputs : open->outputs;
    return impl_->AddTensorTo(open, list->add_items(), tensor);
  } catch (...) {
    return false;
  }
}

bool Client::AddParameter(const Call& call, std::string_view name,
                          const TensorData& tensor) {
  try {
    OpenCall* open = FindCall(call);
    if (open == nullptr || open->parameters == nullptr) return false;
    v1::DictItem* item = open->parameters->add_items();
    item->set_key(std::string(name));
    return impl_->AddTensorTo(open, item->mutable_value(), tensor);
  } catch (...) {
    return false;
  }
}

void Client::EndCall(const Call& call) {
  try {
    OpenCall* open = FindCall(call);
    if (open == nullptr) return;
    client::Core& core = impl_->session->core();
    core.WriteEntry(open->step, open->name_id, 0, open->entry);
    core.WriteCall(false, open->step, open->name_id, record::CallKind::kModule,
                   open->direction);
    // Calls close innermost first; drop this one and any left open inside it.
    while (!t_open_calls.empty() && t_open_calls.back().token != call.token) {
      t_open_calls.pop_back();
    }
    if (!t_open_calls.empty()) t_open_calls.pop_back();
  } catch (...) {
  }
}

}  // namespace tprobe
