#ifndef TPROBE_CLIENT_INCLUDE_TPROBE_CLIENT_H_
#define TPROBE_CLIENT_INCLUDE_TPROBE_CLIENT_H_

// libtprobe: the thin client that a training process (or a framework
// adapter written in C++) links to dump what happens inside its modules and
// APIs, in msprobe's format.
//
// A Client captures hook events, values and tensor bytes and pushes them into
// shared-memory rings; the per-node daemon tprobed computes the statistics and
// writes msprobe's step{N}/rank{R}/ dump tree. Everything msprobe decides per
// call is decided here, so an adapter only reports what its hooks see:
//   - names and call indices: "Functional.relu.0.forward",
//     "Module.layer1.Linear.forward.0", "Cell.net.Dense.forward.0",
//     "Module.layer1.Linear.parameters_grad.0"; indices count per name and
//     start again at every Step(); a backward call reuses its forward's index;
//   - levels: modules are recorded at L0 and mix, APIs at L1 and mix;
//   - the outermost-API rule: an API called inside another API on the same
//     thread is neither recorded nor counted;
//   - the filters step, rank, scope, list and data_mode. A filtered-out call
//     is still counted (names never depend on the filters) and still appears
//     in construct.json, but writes no dump.json entry;
//   - the entry layout: API forward {input_args, input_kwargs, is_recompute,
//     output}, module forward {input_args, input_kwargs, output, parameters,
//     is_recompute}, backward {input, output}, parameter gradients
//     {name: [grad]}; data_mode removes keys.
//
// The client never waits on the daemon: when none answers, every call below
// is a cheap no-op that is counted (counters().dropped_no_daemon), and a
// background thread reconnects with backoff. No exception ever leaves this
// API: failures become a false return, an unrecorded Call or a counter.
//
// Typical use, once per step:
//
//   auto client = tprobe::Client::Create(options, &error);
//   client->Start();
//   tprobe::Call layer = client->BeginModule("layer1", "Linear");
//   client->AddTensor(layer, tprobe::Section::kInput, x);
//   tprobe::Call mm = client->BeginApi("Torch", "matmul");  // inside layer1
//   client->AddTensor(mm, tprobe::Section::kInput, x);
//   client->AddTensor(mm, tprobe::Section::kInput, w);
//   client->AddTensor(mm, tprobe::Section::kOutput, y);
//   client->EndCall(mm);
//   client->AddTensor(layer, tprobe::Section::kOutput, y);
//   client->AddParameter(layer, "weight", w);
//   client->EndCall(layer);
//   … later, in the backward pass …
//   tprobe::Call back = client->BeginModule("layer1", "Linear",
//                                           tprobe::Direction::kBackward,
//                                           layer.index);
//   client->AddTensor(back, tprobe::Section::kInput, grad_y);
//   client->AddTensor(back, tprobe::Section::kOutput, grad_x);
//   client->EndCall(back);
//   client->ParamGrad("layer1", "Linear", "weight", grad_w);
//   client->Stop();
//   client->Step();
//
// Thread safety: Start, Stop, Step and counters may be called from any
// thread. Begin*/Add*/EndCall for one call must come from the thread that
// began it; different threads may record calls at the same time (each gets
// its own ring). ParamGrad may be called from any thread.
//
// This header is C++17 and includes no Boost, protobuf or spdlog header.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Marks the exported API; everything else in libtprobe is hidden.
#define TPROBE_EXPORT __attribute__((visibility("default")))

namespace tprobe {

// Tensor element types. Values match the ring format; do not renumber.
enum class TensorType : uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kBFloat16 = 2,
  kFloat64 = 3,
  kInt8 = 4,
  kUInt8 = 5,
  kInt16 = 6,
  kInt32 = 7,
  kInt64 = 8,
  kBool = 9,
  kComplex64 = 10,
  kComplex128 = 11,
};

// A contiguous tensor in host memory. The client copies `nbytes` from `data`
// before returning; it keeps no pointer.
struct TensorData {
  TensorType dtype = TensorType::kFloat32;
  const int64_t* shape = nullptr;  // ndim sizes; nullptr when ndim == 0
  size_t ndim = 0;
  const void* data = nullptr;
  size_t nbytes = 0;  // must equal numel * element size
  bool requires_grad = false;
};

// A non-tensor value of an entry, built the way msprobe encodes Python
// values (reference/msprobe-format.md, section 2.3). The plain kinds are
// written as they are:
//   Null() -> null, Bool(b) -> true/false, Int(i) -> 3, Float(x) -> 1.5
//   (NaN and infinities as NaN/Infinity), Str(s) -> "s",
//   List() -> [...], Dict() -> {...} (keys in insertion order),
//   Tensor(t) -> the tensor object with its statistics.
// msprobe writes most scalars as typed leaves {"type": T, "value": V}; the
// Of*() helpers build those:
//   OfBool(true)      {"type": "bool", "value": true}
//   OfInt(3)          {"type": "int", "value": 3}
//   OfFloat(0.5)      {"type": "float", "value": 0.5}
//   OfStr("mean")     {"type": "str", "value": "mean"}
//   Ellipsis()        {"type": "ellipsis", "value": "..."}
//   Slice(1, {}, 2)   {"type": "slice", "value": [1, null, 2]}
//   Shape({3, 4})     {"type": "torch.Size", "value": [3, 4]}
//   Typed(t, v)       {"type": t, "value": v} for any other t
// and Dict() builds the rest (msprobe's torch.memory_format, ProcessGroup…).
// A tuple is a List. Nesting deeper than msprobe's 400 levels becomes null.
//
// A Value is a plain value type: copy it, move it, keep it. A Tensor() leaf
// holds the TensorData as given (pointers included), so the tensor's memory
// must stay valid until the Value has been passed to AddValue or AddKwarg.
//
// Thread safety: like std::vector; a Value is not shared between threads
// while one of them changes it.
class Value {
 public:
  enum class Kind : uint8_t {
    kNull,
    kBool,
    kInt,
    kFloat,
    kStr,
    kList,
    kDict,
    kTyped,
    kTensor
  };

  Value() = default;  // null

  static Value Null() { return Value(); }
  static Value Bool(bool v) {
    Value out(Kind::kBool);
    out.bool_ = v;
    return out;
  }
  static Value Int(int64_t v) {
    Value out(Kind::kInt);
    out.int_ = v;
    return out;
  }
  static Value Float(double v) {
    Value out(Kind::kFloat);
    out.float_ = v;
    return out;
  }
  static Value Str(std::string v) {
    Value out(Kind::kStr);
    out.text_ = std::move(v);
    return out;
  }
  static Value List(std::vector<Value> items = {}) {
    Value out(Kind::kList);
    out.items_ = std::move(items);
    return out;
  }
  static Value Dict() { return Value(Kind::kDict); }
  static Value Tensor(const TensorData& tensor) {
    Value out(Kind::kTensor);
    out.tensor_ = tensor;
    return out;
  }
  static Value Typed(std::string type, Value value) {
    Value out(Kind::kTyped);
    out.text_ = std::move(type);
    out.items_.push_back(std::move(value));
    return out;
  }

  static Value OfBool(bool v) { return Typed("bool", Bool(v)); }
  static Value OfInt(int64_t v) { return Typed("int", Int(v)); }
  static Value OfFloat(double v) { return Typed("float", Float(v)); }
  static Value OfStr(std::string v) { return Typed("str", Str(std::move(v))); }
  static Value Ellipsis() { return Typed("ellipsis", Str("...")); }
  // A missing bound is null, as Python's slice(None, …) is.
  static Value Slice(std::optional<int64_t> start, std::optional<int64_t> stop,
                     std::optional<int64_t> step) {
    Value bounds = List();
    for (const auto& b : {start, stop, step}) {
      bounds.Append(b ? Int(*b) : Null());
    }
    return Typed("slice", std::move(bounds));
  }
  static Value Shape(const std::vector<int64_t>& dims) {
    Value list = List();
    for (int64_t d : dims) list.Append(Int(d));
    return Typed("torch.Size", std::move(list));
  }

  // Appends to a List; on any other kind it does nothing. Returns *this, so
  // calls chain: Value::List().Append(a).Append(b).
  Value& Append(Value item) {
    if (kind_ == Kind::kList) items_.push_back(std::move(item));
    return *this;
  }
  // Adds key: value to a Dict (after the keys already there; a repeated key
  // is written twice, as given); on any other kind it does nothing.
  Value& Set(std::string key, Value value) {
    if (kind_ == Kind::kDict) {
      keys_.push_back(std::move(key));
      items_.push_back(std::move(value));
    }
    return *this;
  }

  // Read access, for the client itself and for tests.
  Kind kind() const { return kind_; }
  bool bool_value() const { return bool_; }
  int64_t int_value() const { return int_; }
  double float_value() const { return float_; }
  // kStr: the string; kTyped: the type name.
  const std::string& text() const { return text_; }
  // kList: the items; kDict: the values, in key order; kTyped: one item, the
  // value.
  const std::vector<Value>& items() const { return items_; }
  // kDict: the keys.
  const std::vector<std::string>& keys() const { return keys_; }
  const TensorData& tensor() const { return tensor_; }

 private:
  explicit Value(Kind kind) : kind_(kind) {}

  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double float_ = 0.0;
  std::string text_;
  std::vector<Value> items_;
  std::vector<std::string> keys_;
  TensorData tensor_;
};

// Where a value goes in its entry. Forward calls: kInput appends to
// input_args (positional), kOutput to output, kParameter to parameters
// (modules only). Backward calls: kInput and kOutput are msprobe's backward
// "input" (the gradients of the forward outputs) and "output" (the gradients
// of the forward inputs, null for an input that takes none).
enum class Section : uint8_t { kInput = 0, kOutput = 1, kParameter = 2 };

enum class Direction : uint8_t { kForward = 0, kBackward = 1 };

// How module names start: PyTorch's "Module." or MindSpore's "Cell.".
enum class ModuleStyle : uint8_t { kModule = 0, kCell = 1 };

struct ClientOptions {
  // msprobe-style config.json (task, dump_path, level, step, rank, scope,
  // list, data_mode, …). Empty: msprobe's defaults (statistics, L1,
  // ./dump_path).
  std::string config_path;
  // When not empty, replaces the config's dump_path.
  std::string dump_path;
  // Control socket; empty: the config's tprobe.socket, then $TPROBE_SOCKET,
  // then a per-user runtime path.
  std::string socket_path;
  // Distributed rank; -1 writes to the directory "rank" as msprobe does.
  int rank = -1;
  // Start a private tprobed when none answers (it exits when its clients are
  // gone). daemon_path names the binary; empty: next to libtprobe.
  bool autostart_daemon = false;
  std::string daemon_path;
  // How long Create may wait for a daemon (and an autostarted one to come
  // up) before going on without one.
  int connect_timeout_ms = 5000;
};

// Counts since Create. produced = records_written + every dropped_*.
struct ClientCounters {
  uint64_t records_written = 0;
  uint64_t dropped_no_daemon = 0;
  uint64_t dropped_ring_full = 0;
  uint64_t dropped_too_large = 0;
};

// A call between Begin* and EndCall.
//   - A default Call (token 0) was never opened: the level does not record
//     this kind of call, capture is off, or it is an API nested in another.
//     EndCall and every Add* on it are no-ops.
//   - An open call that is not recorded() was counted and named but is
//     filtered out (scope, list), or data_mode keeps none of its direction,
//     or there is no daemon: Add* return false. It must still be ended.
//   - A recorded() call writes its entry at EndCall.
struct Call {
  uint64_t token = 0;
  // N of the call's name; pass it to the Begin* of the backward call.
  uint32_t index = 0;
  bool dumped = false;
  bool open() const { return token != 0; }
  bool recorded() const { return dumped; }
};

class TPROBE_EXPORT Client {
 public:
  // Reads and validates the config. Returns nullptr and sets *error (when
  // error is not null) for a bad config, or when a daemon answered but
  // refused the registration (an unwritable dump_path, say) or runs as an
  // untrusted uid; a missing daemon is not an error.
  static std::unique_ptr<Client> Create(const ClientOptions& options,
                                        std::string* error);

  // Flushes: tells the daemon goodbye and waits (bounded by the connect
  // timeout) until it has written what this client sent.
  ~Client();

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // msprobe's lifecycle: Start begins collecting the current step (if the
  // config selects it), Stop pauses and flushes, Step ends the step (flush,
  // then call indices and filter ranges reset and the step number advances).
  // After the last configured step, Start logs that tprobe has ended and
  // nothing more is collected; training is never stopped.
  void Start();
  void Stop();
  void Step();

  // The step being collected (0 first).
  uint32_t current_step() const;
  // Whether a daemon is connected right now.
  bool connected() const;
  ClientCounters counters() const;
  // Where this rank's tree goes: dump_path/step{N}/rank{R} for the current
  // step.
  std::string dump_dir() const;

  // Opens a module call "Module.{path}.{class_name}.{forward|backward}.{N}"
  // (levels L0 and mix; `path` is the module's dotted path below the root
  // model, which itself is never dumped). A forward call takes the module's
  // next index N; a backward call reuses `forward_index`, the index of the
  // forward call it belongs to (Call::index). Calls nest: a call opened while
  // another is open on the thread is its child in construct.json.
  Call BeginModule(std::string_view path, std::string_view class_name,
                   Direction direction = Direction::kForward,
                   uint32_t forward_index = 0);

  // The same for a MindSpore cell: "Cell.{path}.{class_name}.forward.{N}".
  Call BeginCell(std::string_view path, std::string_view class_name,
                 Direction direction = Direction::kForward,
                 uint32_t forward_index = 0);

  // Opens an API call "{prefix}.{api}.{N}.{forward|backward}" (levels L1 and
  // mix), e.g. BeginApi("Functional", "relu"). Only the last dotted part of
  // `api` is used ("linalg.norm" -> "norm"), as msprobe does. Only the
  // outermost API call of a thread is recorded: a forward API call begun
  // while another is open on the same thread returns a default Call and is
  // not counted. A backward call reuses `forward_index`; backward calls are
  // recorded after Stop() too, until Step(), as msprobe's are.
  Call BeginApi(std::string_view prefix, std::string_view api,
                Direction direction = Direction::kForward,
                uint32_t forward_index = 0);

  // Appends a tensor to the call's input (positional), output (positional)
  // or parameters (named by its position). Returns false when it was not
  // recorded (see Call, and data_mode: a forward call's inputs are kept only
  // when data_mode keeps forward inputs, and so on). An API call's tensors go
  // into the ring at once; a module call's are copied aside until EndCall,
  // because the calls inside the module write their entries first. A
  // malformed tensor (nbytes not numel times the element size, a negative
  // size, more than 64 dimensions) is written as null and returns false.
  bool AddTensor(const Call& call, Section section, const TensorData& tensor);

  // Appends any value (a scalar, a list of tensors, null for a missing
  // gradient, …) to input, output or parameters, like AddTensor. A
  // kParameter value is named by its position.
  bool AddValue(const Call& call, Section section, const Value& value);

  // Adds `key: value` to the input_kwargs of a forward call. Returns false
  // when it was not recorded (backward call, data_mode without forward
  // inputs, …).
  bool AddKwarg(const Call& call, std::string_view key, const Value& value);

  // Adds `name: tensor` to a module forward call's parameters.
  bool AddParameter(const Call& call, std::string_view name,
                    const TensorData& tensor);

  // The call stack of a forward call for stack.json, innermost frame first,
  // each line in msprobe's form "File {path}, line {n}, in {func}, \n {code}".
  // Entries with the same lines share one stack.json group. Backward calls
  // have no stack: returns false for them.
  bool AddStack(const Call& call, const std::vector<std::string>& lines);

  // Closes the call and writes its entry (when recorded). Calls close
  // innermost first; closing an outer call also forgets any call still open
  // inside it on this thread, without writing their entries.
  void EndCall(const Call& call);

  // Records the gradient of parameter `name` of a module (levels L0 and mix,
  // data_mode keeping backward data): the entry
  // "{Module|Cell}.{path}.{class_name}.parameters_grad.{K}" gets
  // `name: [grad]`. K counts the module's backward passes in the step: it
  // grows each time the first parameter reported in the step is reported
  // again, so the parameters of one pass share one entry. The gradient is
  // dumped when a forward call of the module was dumped in this step, or
  // when the entry name passes the filters itself. Not recorded while an API
  // call is open on the same thread. Returns false when it was not recorded.
  bool ParamGrad(std::string_view path, std::string_view class_name,
                 std::string_view name, const TensorData& grad,
                 ModuleStyle style = ModuleStyle::kModule);

  class Impl;

 private:
  explicit Client(std::unique_ptr<Impl> impl);
  Call BeginModuleCall(ModuleStyle style, std::string_view path,
                       std::string_view class_name, Direction direction,
                       uint32_t forward_index);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tprobe

#endif  // TPROBE_CLIENT_INCLUDE_TPROBE_CLIENT_H_
