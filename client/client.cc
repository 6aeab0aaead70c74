// The public C++ Client (include/tprobe/client.h) over a Session.
// Naming, filters and levels are the Session's; this file turns TensorData
// and Value (flattened by the header, detail::ValueNode) into the entry
// (client/entry_builder.h), and keeps each thread's open calls per Client so
// that a Call of another Client or of an earlier step is refused. Every entry
// point runs its body through Contained, the one place an exception stops:
// none crosses the API, and each is counted.
//
// Ring order: every tensor goes into the ring when it is added, copied from
// the caller's buffer, and its entry (which refers to it by ref) at EndCall.
// The daemon keeps a tensor until the entry that refers to it, so a module's
// input tensors wait while its children's entries go by
// (daemon/ingest/drain.h).

#include "tprobe/client.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "client/entry_builder.h"
#include "client/naming.h"
#include "client/session.h"
#include "common/config/dump_dir.h"
#include "common/dtype.h"
#include "common/record/record.h"
#include "common/record_losses.h"

namespace tprobe {

namespace {

// The one place where an exception stops on its way out of the library (its
// functions are noexcept): an exported function runs its body here, and an
// exception becomes `fallback`, counted in counters().failures_contained
// when `failures` is given.
template <typename R, typename F>
R Contained(std::atomic<uint64_t>* failures, R fallback, F&& body) noexcept {
  try {
    return body();
  } catch (...) {
    if (failures != nullptr) failures->fetch_add(1, std::memory_order_relaxed);
    return fallback;
  }
}

template <typename F>
void Contained(std::atomic<uint64_t>* failures, F&& body) noexcept {
  try {
    body();
  } catch (...) {
    if (failures != nullptr) failures->fetch_add(1, std::memory_order_relaxed);
  }
}

// One call between Begin and End on this thread: a slot of the thread's
// pool, reused (its plan's name, its entry's buffers and all) by the calls
// that come after it at the same depth.
struct OpenCall {
  explicit OpenCall(client::Recorder& core) : entry(core) {}
  uint64_t token = 0;
  client::CallPlan plan;
  uint32_t stack_id = 0;
  uint32_t parameters = 0;  // items in the parameters part so far
  client::EntryBuilder entry;
};

// One Client's calls on this thread. slots[0, depth) are open, innermost
// last; the slots above are kept for the next calls, so a warm Begin/End
// allocates nothing (a slot is made only when the thread nests deeper than
// it ever did).
struct ThreadCalls {
  std::weak_ptr<const int> owner;  // expires with the Client
  uint64_t client = 0;
  uint64_t generation = 0;  // the Client's step generation they belong to
  std::vector<std::unique_ptr<OpenCall>> slots;
  size_t depth = 0;
  // Reused text: the base name of the call being begun, a call's stack.
  std::string base;
  client::StackText stack;
  // A parameter gradient's plan and entry (written at once, never open).
  client::CallPlan grad_plan;
  std::unique_ptr<client::EntryBuilder> grad_entry;
};

// This thread's calls of every Client it used, and the one used last.
struct ThreadState {
  std::vector<std::unique_ptr<ThreadCalls>> clients;
  ThreadCalls* last = nullptr;
};
thread_local ThreadState t_state;

std::atomic<uint64_t> g_next_client{1};
std::atomic<uint64_t> g_next_thread{1};

// A call token, unique in the process without a shared counter per call:
// the thread's number in the top 24 bits, its own count below.
uint64_t NextToken() {
  thread_local uint64_t next = 0;
  if (next == 0) {
    next = (g_next_thread.fetch_add(1, std::memory_order_relaxed) << 40) | 1;
  }
  return next++;
}

std::string_view View(detail::Text t) {
  return t.data == nullptr ? std::string_view()
                           : std::string_view(t.data, t.size);
}

// Bytes a well-formed tensor of this shape and dtype holds, or -1 when the
// dtype is unknown or a size negative.
int64_t ExpectedBytes(const TensorData& t) {
  if (static_cast<int>(t.dtype) >= kDTypeCount) return -1;
  if (t.ndim > record::kMaxDims || (t.ndim > 0 && t.shape == nullptr)) {
    return -1;
  }
  int64_t n = static_cast<int64_t>(ElementSize(t.dtype));
  for (size_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0 || __builtin_mul_overflow(n, t.shape[i], &n)) return -1;
  }
  return n;
}

// The writer of the next positional item of `section` in the call's entry
// (parameters are named by position), or nullptr when data_mode leaves that
// side out.
record::ValueWriter* NextSlot(OpenCall* open, Section section) {
  using client::Part;
  if (section == Section::kParameter) {
    record::ValueWriter* w = open->entry.Items(Part::kParameters);
    if (w != nullptr) {
      char digits[10];
      const auto end =
          std::to_chars(digits, digits + sizeof digits, open->parameters++).ptr;
      w->Key(std::string_view(digits, static_cast<size_t>(end - digits)));
    }
    return w;
  }
  if (section == Section::kOutput) return open->entry.Items(Part::kOutput);
  return open->entry.Items(open->plan.forward ? Part::kInputArgs
                                              : Part::kInput);
}

// Advances *pos past `siblings` flattened values and their children.
void Skip(uint64_t siblings, const detail::ValueNode* nodes, size_t count,
          size_t* pos) {
  while (siblings > 0 && *pos < count) {
    siblings += nodes[(*pos)++].children;
    --siblings;
  }
}

class TensorSink {
 public:
  explicit TensorSink(client::EntryBuilder& entry) : entry_(entry) {}

  // Sends `t` and writes its ref. A malformed tensor is null.
  // Returns false when it was not recorded.
  bool Put(const TensorData& t, record::ValueWriter& out) {
    const int64_t expected = ExpectedBytes(t);
    if (expected < 0 || static_cast<uint64_t>(expected) != t.nbytes ||
        (t.nbytes > 0 && t.data == nullptr)) {
      out.Null();
      return false;
    }
    const DType dtype = t.dtype;
    const std::span<const int64_t> shape(t.shape, t.ndim);
    return entry_.Tensor(out, dtype, shape, t.requires_grad, t.data, t.nbytes);
  }

  // Converts the flattened value at nodes[*pos] (and its children, which
  // follow it) into the value tree, sending its tensors; advances *pos past
  // it. The nodes come from the caller's header: a child count that runs
  // past the end stops at the end.
  bool Convert(const detail::ValueNode* nodes, size_t count, size_t* pos,
               record::ValueWriter& out, int depth) {
    if (*pos >= count) {
      out.Null();
      return false;
    }
    const detail::ValueNode& node = nodes[(*pos)++];
    if (depth > client::kMaxDepth) {
      out.Null();
      Skip(node.children, nodes, count, pos);
      return false;
    }
    bool ok = true;
    uint32_t converted = 0;
    switch (static_cast<Value::Kind>(node.kind)) {
      case Value::Kind::kNull:
        out.Null();
        break;
      case Value::Kind::kBool:
        out.Bool(node.bool_value);
        break;
      case Value::Kind::kInt:
        out.Int(node.int_value);
        break;
      case Value::Kind::kFloat:
        out.Float(node.float_value);
        break;
      case Value::Kind::kStr:
        out.Str(View(node.text));
        break;
      case Value::Kind::kList: {
        out.BeginList();
        for (; converted < node.children && *pos < count; ++converted) {
          ok &= Convert(nodes, count, pos, out, depth + 1);
        }
        out.End();
        break;
      }
      case Value::Kind::kDict: {
        out.BeginDict();
        for (; converted < node.children && *pos < count; ++converted) {
          out.Key(View(nodes[*pos].key));
          ok &= Convert(nodes, count, pos, out, depth + 1);
        }
        out.End();
        break;
      }
      case Value::Kind::kTyped: {
        out.Typed(View(node.text));
        if (node.children == 0) {
          out.Null();
        } else {
          ok &= Convert(nodes, count, pos, out, depth + 1);
          converted = 1;
        }
        break;
      }
      case Value::Kind::kTensor:
        if (node.tensor == nullptr) {
          out.Null();
          ok = false;
        } else {
          ok &= Put(*node.tensor, out);
        }
        break;
      default:
        out.Null();
        ok = false;
        break;
    }
    Skip(node.children - std::min(converted, node.children), nodes, count, pos);
    return ok;
  }

 private:
  client::EntryBuilder& entry_;
};

}  // namespace

// A Call crosses the library boundary by value (BeginRaw returns it, Add*
// and EndCall take it): changing its layout needs a TPROBE_ABI_VERSION bump.
static_assert(sizeof(Call) == 32 && std::is_trivially_copyable_v<Call> &&
              std::is_standard_layout_v<Call>);

class Client::Impl {
 public:
  explicit Impl(std::unique_ptr<client::Session> session)
      : session(std::move(session)) {}

  const std::unique_ptr<client::Session> session;
  // The identity a Call carries: unique in the process, never reused.
  const uint64_t id = g_next_client.fetch_add(1, std::memory_order_relaxed);
  // Expires when the Client goes: other threads then drop its open calls.
  const std::shared_ptr<const int> alive = std::make_shared<const int>(0);
  // Bumped by Step(): the Calls of older generations are stale.
  std::atomic<uint64_t> generation{1};
  // Calls opened in this generation and not yet closed (all threads), and
  // calls forgotten by an outer EndCall in it: reported to the daemon at
  // Step as unclosed.
  std::atomic<int64_t> open{0};
  std::atomic<uint64_t> forgotten{0};
  std::atomic<uint64_t> refused{0};
  std::atomic<uint64_t> unclosed{0};
  // Exceptions stopped at the library's boundary (Contained).
  std::atomic<uint64_t> failures{0};

  // This thread's calls of this Client. Calls of an older generation were
  // reported unclosed at Step: they are dropped here, unsent.
  ThreadCalls& Calls() {
    ThreadCalls* t = t_state.last;
    if (t == nullptr || t->client != id) t = Lookup();
    const uint64_t gen = generation.load(std::memory_order_acquire);
    if (t->generation != gen) {
      t->depth = 0;
      t->generation = gen;
    }
    return *t;
  }

  // The open call `call` names on this thread, or nullptr. A Call that is
  // not default and names no such call (another Client's, an older step's,
  // ended already, opened on another thread) is refused and counted.
  OpenCall* Find(const Call& call) {
    if (call.token_ == 0) return nullptr;
    if (call.client_ == id &&
        call.generation_ == generation.load(std::memory_order_acquire)) {
      ThreadCalls& t = Calls();
      for (size_t i = t.depth; i > 0; --i) {
        if (t.slots[i - 1]->token == call.token_) return t.slots[i - 1].get();
      }
    }
    refused.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }

  // The slot the next call of this thread takes (made on first use).
  OpenCall& TakeSlot(ThreadCalls& t) {
    if (t.depth == t.slots.size()) {
      t.slots.push_back(std::make_unique<OpenCall>(session->recorder()));
    }
    return *t.slots[t.depth];
  }

  // Opens the call the session planned in the thread's next slot.
  Call Open(ThreadCalls& t, OpenCall& slot) {
    slot.token = NextToken();
    slot.stack_id = 0;
    slot.parameters = 0;
    slot.entry.Reset();
    if (slot.plan.entry()) slot.entry.LayOut(slot.plan);
    ++t.depth;
    open.fetch_add(1, std::memory_order_relaxed);
    Call handle;
    handle.token_ = slot.token;
    handle.client_ = id;
    handle.generation_ = t.generation;
    handle.index_ = slot.plan.index;
    handle.recorded_ = slot.plan.entry();
    return handle;
  }

  // Closes the innermost open call of this thread; writes its entry when
  // `write`, else counts it as forgotten.
  void CloseInnermost(ThreadCalls& t, bool write) {
    OpenCall& call = *t.slots[--t.depth];
    open.fetch_sub(1, std::memory_order_relaxed);
    if (write) {
      const bool had_output = call.plan.output;
      session->CheckEnd(&call.plan);
      if (had_output && !call.plan.output) {
        // Its outputs did not pass scope and list when the call ended.
        call.entry.Drop(client::Part::kOutput);
        call.entry.Drop(client::Part::kParameters);
      }
      if (call.plan.entry()) {
        session->WriteEntry(call.plan, call.stack_id, call.entry);
      } else if (call.plan.stack()) {
        // Only the stack is listed (data_mode keeps none of the data).
        call.entry.Reset();
        session->WriteEntry(call.plan, call.stack_id, call.entry);
      }
    } else {
      forgotten.fetch_add(1, std::memory_order_relaxed);
    }
    session->EndCall(call.plan);
  }

 private:
  // This thread's calls of this Client, found or made; the state of Clients
  // that are gone is dropped when a new one is made.
  ThreadCalls* Lookup() {
    auto& clients = t_state.clients;
    for (const auto& t : clients) {
      if (t->client == id) return t_state.last = t.get();
    }
    std::erase_if(clients, [](const std::unique_ptr<ThreadCalls>& t) {
      return t->owner.expired();
    });
    auto t = std::make_unique<ThreadCalls>();
    t->owner = alive;
    t->client = id;
    t->generation = generation.load(std::memory_order_acquire);
    t->grad_entry = std::make_unique<client::EntryBuilder>(session->recorder());
    clients.push_back(std::move(t));
    return t_state.last = clients.back().get();
  }
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() {
  Contained(nullptr, [&] {
    if (client::InForkedChild()) {
      // A child forked without exec: its parent's control thread does not
      // exist here and the daemon never answers this process, so nothing
      // is waited for or joined; the memory is left to the child's exit.
      (void)impl_.release();
      return;
    }
    impl_.reset();
  });
}

Client* Client::CreateRaw(const detail::OptionsView& options,
                          detail::ErrorSink error) noexcept {
  auto fail = [&error](const std::string& message) -> Client* {
    if (error.set != nullptr) {
      error.set(error.context, message.data(), message.size());
    }
    return nullptr;
  };
  try {
    if (options.abi_version != TPROBE_ABI_VERSION) {
      return fail("this program was built with the headers of tprobe ABI " +
                  std::to_string(options.abi_version) +
                  ", but the libtprobe it loaded is " TPROBE_VERSION_STRING
                  " (ABI " +
                  std::to_string(TPROBE_ABI_VERSION) +
                  "); rebuild it against the installed tprobe");
    }
    client::SessionOptions so;
    so.config_path = View(options.config_path);
    so.dump_path = View(options.dump_path);
    so.socket_path = View(options.socket_path);
    so.rank = options.rank;
    so.autostart_daemon = options.autostart_daemon;
    so.daemon_path = View(options.daemon_path);
    so.connect_timeout_ms = options.connect_timeout_ms;
    auto session = client::Session::Create(so);
    if (!session.ok()) return fail(session.status().message());
    return new Client(std::make_unique<Impl>(std::move(session).value()));
  } catch (const std::exception& e) {
    return fail(e.what());
  } catch (...) {
    return fail("unknown error");
  }
}

void Client::Start() noexcept {
  Contained(&impl_->failures, [&] { impl_->session->Start(); });
}

void Client::Stop() noexcept {
  Contained(&impl_->failures, [&] { impl_->session->Stop(); });
}

void Client::Step() noexcept {
  Contained(&impl_->failures, [&] {
    // Every call still open (on any thread) becomes stale; its thread drops
    // it unsent, and the daemon marks the step incomplete.
    impl_->generation.fetch_add(1, std::memory_order_acq_rel);
    const int64_t open = impl_->open.exchange(0, std::memory_order_acq_rel);
    const uint64_t unclosed =
        static_cast<uint64_t>(std::max<int64_t>(open, 0)) +
        impl_->forgotten.exchange(0);
    impl_->unclosed.fetch_add(unclosed, std::memory_order_relaxed);
    impl_->session->Step(unclosed);
  });
}

uint32_t Client::current_step() const noexcept {
  return impl_->session->step();
}

bool Client::connected() const noexcept { return impl_->session->connected(); }

size_t Client::DumpDirRaw(char* buffer, size_t capacity) const noexcept {
  return Contained(&impl_->failures, size_t{0}, [&]() -> size_t {
    const client::Session& s = *impl_->session;
    const std::string dir =
        config::StepRankDir(s.config().dump_path, s.step(), s.rank());
    if (buffer != nullptr && dir.size() <= capacity) {
      std::memcpy(buffer, dir.data(), dir.size());
    }
    return dir.size();
  });
}

ClientCounters Client::counters() const noexcept {
  client::Recorder& core = impl_->session->recorder();
  ClientCounters c;
  c.records_written = core.records_written();
  // Every reason of common/record_losses.h's list, under the public names.
  const RankLosses dropped = core.Dropped();
#define TPROBE_COUNT_(name) c.dropped_##name = dropped.name;
  TPROBE_RANK_LOSSES(TPROBE_COUNT_)
#undef TPROBE_COUNT_
  c.calls_refused = impl_->refused.load(std::memory_order_relaxed);
  c.calls_unclosed = impl_->unclosed.load(std::memory_order_relaxed);
  c.failures_contained = impl_->failures.load(std::memory_order_relaxed);
  return c;
}

Call Client::BeginRaw(detail::CallSite site, detail::Text scope,
                      detail::Text name, Direction direction,
                      uint32_t forward_index) noexcept {
  return Contained(&impl_->failures, Call{}, [&]() -> Call {
    client::Session& s = *impl_->session;
    const bool forward = direction == Direction::kForward;
    if (site == detail::CallSite::kApi ? !s.step_active() : !s.collecting()) {
      return Call{};
    }
    ThreadCalls& t = impl_->Calls();
    OpenCall& slot = impl_->TakeSlot(t);
    bool began = false;
    if (site == detail::CallSite::kApi) {
      client::SetApiBase(&t.base, View(scope), View(name));
      began = s.BeginApi(t.base, forward, forward_index, &slot.plan);
    } else {
      const auto style = site == detail::CallSite::kCell
                             ? client::ModuleStyle::kCell
                             : client::ModuleStyle::kModule;
      client::SetModuleBase(&t.base, style, View(scope), View(name));
      began = s.BeginModule(t.base, forward, forward_index, &slot.plan);
    }
    return began ? impl_->Open(t, slot) : Call{};
  });
}

bool Client::AddTensor(const Call& call, Section section,
                       const TensorData& tensor) noexcept {
  return Contained(&impl_->failures, false, [&]() -> bool {
    OpenCall* open = impl_->Find(call);
    if (open == nullptr || !open->plan.entry()) return false;
    record::ValueWriter* slot = NextSlot(open, section);
    if (slot == nullptr) return false;
    return TensorSink(open->entry).Put(tensor, *slot);
  });
}

bool Client::AddValueRaw(const Call& call, Section section,
                         const detail::ValueNode* nodes,
                         size_t count) noexcept {
  return Contained(&impl_->failures, false, [&]() -> bool {
    OpenCall* open = impl_->Find(call);
    if (open == nullptr || !open->plan.entry()) return false;
    record::ValueWriter* slot = NextSlot(open, section);
    if (slot == nullptr) return false;
    size_t pos = 0;
    return TensorSink(open->entry).Convert(nodes, count, &pos, *slot, 0);
  });
}

bool Client::AddKwargRaw(const Call& call, detail::Text key,
                         const detail::ValueNode* nodes,
                         size_t count) noexcept {
  return Contained(&impl_->failures, false, [&]() -> bool {
    OpenCall* open = impl_->Find(call);
    if (open == nullptr) return false;
    record::ValueWriter* kwargs = open->entry.Items(client::Part::kInputKwargs);
    if (kwargs == nullptr) return false;
    kwargs->Key(View(key));
    size_t pos = 0;
    return TensorSink(open->entry).Convert(nodes, count, &pos, *kwargs, 0);
  });
}

bool Client::AddParameterRaw(const Call& call, detail::Text name,
                             const TensorData& tensor) noexcept {
  return Contained(&impl_->failures, false, [&]() -> bool {
    OpenCall* open = impl_->Find(call);
    if (open == nullptr) return false;
    record::ValueWriter* params = open->entry.Items(client::Part::kParameters);
    if (params == nullptr) return false;
    params->Key(View(name));
    ++open->parameters;
    return TensorSink(open->entry).Put(tensor, *params);
  });
}

bool Client::AddStackRaw(const Call& call, const detail::Text* lines,
                         size_t count) noexcept {
  return Contained(&impl_->failures, false, [&]() -> bool {
    OpenCall* open = impl_->Find(call);
    if (open == nullptr || !open->plan.stack()) return false;
    client::StackText& stack = impl_->Calls().stack;
    stack.Clear();
    for (size_t i = 0; i < count; ++i) stack.Add(View(lines[i]));
    open->stack_id = stack.Intern(impl_->session->recorder());
    return open->stack_id != 0;
  });
}

void Client::EndCall(const Call& call) noexcept {
  Contained(&impl_->failures, [&] {
    if (impl_->Find(call) == nullptr) return;
    // Calls close innermost first; any left open inside this one are closed
    // without their entries.
    ThreadCalls& t = impl_->Calls();
    while (t.slots[t.depth - 1]->token != call.token_) {
      impl_->CloseInnermost(t, /*write=*/false);
    }
    impl_->CloseInnermost(t, /*write=*/true);
  });
}

bool Client::ParamGradRaw(detail::Text path, detail::Text class_name,
                          detail::Text name, const TensorData& grad,
                          ModuleStyle style) noexcept {
  return Contained(&impl_->failures, false, [&]() -> bool {
    client::Session& s = *impl_->session;
    if (!s.collecting()) return false;
    // Inside an API call nothing else is recorded (the outermost rule).
    ThreadCalls& t = impl_->Calls();
    if (t.depth > 0 &&
        t.slots[t.depth - 1]->plan.kind == record::CallKind::kApi) {
      return false;
    }
    client::SetModuleBase(&t.base, style, View(path), View(class_name));
    client::CallPlan& plan = t.grad_plan;
    if (!s.BeginParamGrad(t.base, View(name), &plan)) return false;
    client::EntryBuilder& entry = *t.grad_entry;
    entry.Reset();
    record::ValueWriter& body = entry.Extra();
    body.Key(View(name));
    body.BeginList();
    const bool sent = TensorSink(entry).Put(grad, body);
    body.End();
    return s.WriteEntry(plan, 0, entry) && sent;
  });
}

}  // namespace tprobe
