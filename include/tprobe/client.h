#ifndef TPROBE_INCLUDE_TPROBE_CLIENT_H_
#define TPROBE_INCLUDE_TPROBE_CLIENT_H_

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
//   - the entry layout (msprobe 26.x's, without is_recompute): API forward
//     {input_args, input_kwargs, output}, module forward {input_args,
//     input_kwargs, output, parameters}, backward {input, output},
//     parameter gradients {name: [grad]}; data_mode removes keys.
//
// The client never waits on the daemon: when none answers, every call below
// is a cheap no-op that is counted (counters().dropped_no_daemon), and a
// background thread reconnects with backoff. No exception ever leaves the
// Client (its functions and ScopedCall's are noexcept): failures become a
// false return, an unrecorded Call or a counter. Building a Value allocates
// like any std::vector and may throw std::bad_alloc in the caller's code.
//
// Typical use, once per step, with scoped calls that end themselves:
//
//   std::string error;
//   auto client = tprobe::Client::Create(options, &error);
//   client->Start();
//   {
//     auto layer = client->Module("layer1", "Linear");
//     layer.Input(tprobe::TensorData::Of(x, x_shape));  // float: kFloat32
//     {
//       auto mm = client->Api("Torch", "matmul");  // inside layer1
//       mm.Input(tprobe::TensorData::Of(x, x_shape));
//       mm.Output(tprobe::TensorData::Of(y, y_shape));
//     }                                              // mm ends here
//     layer.Output(tprobe::TensorData::Of(y, y_shape));
//     layer.Parameter("weight", tprobe::TensorData::Of(w, w_shape));
//     forward_index = layer.index();
//   }                                                // layer ends here
//   … later, in the backward pass …
//   {
//     auto back = client->Module("layer1", "Linear",
//                                tprobe::Direction::kBackward, forward_index);
//     back.Input(grad_y_tensor);
//     back.Output(grad_x_tensor);
//   }
//   client->ParamGrad("layer1", "Linear", "weight", grad_w_tensor);
//   client->Stop();
//   client->Step();
//
// The unscoped form (Begin* returning a Call, then Add*(call, …) and
// EndCall(call)) does the same for adapters whose begin and end happen in
// different hook functions.
//
// Misuse is contained, never written: a Call belongs to the Client that
// opened it and to the step it was opened in. A Call of another Client, of an
// earlier step, one already ended, or one used on another thread is refused
// (the call returns false or does nothing) and counted in
// counters().calls_refused; nothing of it reaches the daemon. Calls still
// open when Step() ends their step are closed as incomplete: they write no
// entry, they never become parents of the next step's calls, and the step's
// tprobe.json says "complete": false with "calls_unclosed": N.
//
// Thread safety: Start, Stop, Step and counters may be called from any
// thread. Begin*/Add*/EndCall for one call must come from the thread that
// began it; different threads may record calls at the same time (each gets
// its own ring). ParamGrad may be called from any thread. A Client must
// outlive the ScopedCalls it returned.
//
// Library boundary: this header is C++17 and includes no Boost, protobuf or
// spdlog header. The functions libtprobe exports take only plain structs and
// (pointer, size) text; everything that touches std::string, std::vector or
// Value is inline here, so a program built with either libstdc++ string ABI
// (_GLIBCXX_USE_CXX11_ABI=0 or 1) links and runs against the same library.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
#endif

#include "tprobe/detail/abi.h"
#include "tprobe/types.h"
#include "tprobe/version.h"

// TPROBE_EXPORT_ marks what libtprobe exports (it is #undef'd at the end of
// this header; everything else in the library is hidden). On ELF the
// library and its users both need default visibility, even in a program
// built with -fvisibility=hidden.
#if defined(_WIN32)
#if defined(TPROBE_BUILDING_LIBRARY)
#define TPROBE_EXPORT_ __declspec(dllexport)
#else
#define TPROBE_EXPORT_ __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define TPROBE_EXPORT_ __attribute__((visibility("default")))
#else
#define TPROBE_EXPORT_
#endif

namespace tprobe {

// Element types C++17 has no name for: IEEE half and bfloat16, as their raw
// 16 bits, for typed buffers of those tensors.
struct Float16 {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// TensorTypeOf<T>::value: the TensorType of a buffer of T, for float,
// double, int8_t, uint8_t, int16_t, int32_t, int64_t, bool,
// std::complex<float>, std::complex<double>, Float16 and BFloat16 (and
// C++23's std::float16_t and std::bfloat16_t where the compiler has them).
// Any other T does not compile.
template <typename T>
struct TensorTypeOf {
  static_assert(sizeof(T) == 0,
                "tprobe: no TensorType for this element type; use float, "
                "double, (u)intN_t, bool, std::complex, tprobe::Float16 or "
                "tprobe::BFloat16, or fill TensorData yourself");
};
template <typename T>
struct TensorTypeOf<const T> : TensorTypeOf<T> {};
#define TPROBE_TENSOR_TYPE_OF_(type, value_)                \
  template <>                                               \
  struct TensorTypeOf<type> {                               \
    static constexpr TensorType value = TensorType::value_; \
  }
TPROBE_TENSOR_TYPE_OF_(float, kFloat32);
TPROBE_TENSOR_TYPE_OF_(double, kFloat64);
TPROBE_TENSOR_TYPE_OF_(int8_t, kInt8);
TPROBE_TENSOR_TYPE_OF_(uint8_t, kUInt8);
TPROBE_TENSOR_TYPE_OF_(int16_t, kInt16);
TPROBE_TENSOR_TYPE_OF_(int32_t, kInt32);
TPROBE_TENSOR_TYPE_OF_(int64_t, kInt64);
TPROBE_TENSOR_TYPE_OF_(bool, kBool);
TPROBE_TENSOR_TYPE_OF_(Float16, kFloat16);
TPROBE_TENSOR_TYPE_OF_(BFloat16, kBFloat16);
TPROBE_TENSOR_TYPE_OF_(std::complex<float>, kComplex64);
TPROBE_TENSOR_TYPE_OF_(std::complex<double>, kComplex128);
#if defined(__STDCPP_FLOAT16_T__)
TPROBE_TENSOR_TYPE_OF_(decltype(0.0f16), kFloat16);
#endif
#if defined(__STDCPP_BFLOAT16_T__)
TPROBE_TENSOR_TYPE_OF_(decltype(0.0bf16), kBFloat16);
#endif
#undef TPROBE_TENSOR_TYPE_OF_
// A contiguous tensor in host memory. The client copies `nbytes` from `data`
// before returning; it keeps no pointer. TensorData itself only points: the
// shape and the data must stay valid while it is used.
struct TensorData {
  TensorType dtype = TensorType::kFloat32;
  const int64_t* shape = nullptr;  // ndim sizes; nullptr when ndim == 0
  size_t ndim = 0;
  const void* data = nullptr;
  size_t nbytes = 0;  // must equal numel * element size
  bool requires_grad = false;

  // A typed buffer of `count` elements with `ndim` sizes at `shape`; the
  // dtype is TensorTypeOf<T>. A count that does not match the shape is
  // refused when the tensor is added (it is written as null).
  template <typename T>
  [[nodiscard]] static TensorData Of(const T* data, size_t count,
                                     const int64_t* shape, size_t ndim,
                                     bool requires_grad = false) noexcept {
    TensorData t;
    t.dtype = TensorTypeOf<T>::value;
    t.shape = ndim == 0 ? nullptr : shape;
    t.ndim = ndim;
    t.data = data;
    t.nbytes = count * sizeof(T);
    t.requires_grad = requires_grad;
    return t;
  }

  // The same from a contiguous container (std::vector<float>, std::array,
  // a C array…) and a container of int64_t sizes:
  //   std::vector<float> x(6);  std::vector<int64_t> shape{2, 3};
  //   client->AddTensor(call, Section::kInput, TensorData::Of(x, shape));
  // Both must be lvalues that outlive the TensorData: a temporary does not
  // compile.
  template <typename Data, typename Shape>
  [[nodiscard]] static TensorData Of(const Data& data, const Shape& shape,
                                     bool requires_grad = false) noexcept {
    static_assert(std::is_same_v<std::remove_cv_t<std::remove_reference_t<
                                     decltype(*std::data(shape))>>,
                                 int64_t>,
                  "tprobe: a shape is a container of int64_t");
    return Of(std::data(data), std::size(data), std::data(shape),
              std::size(shape), requires_grad);
  }
  template <typename Data, typename Shape>
  static TensorData Of(const Data&, const Shape&&, bool = false) = delete;
  template <typename Data, typename Shape>
  static TensorData Of(const Data&&, const Shape&, bool = false) = delete;

#if defined(__cpp_lib_span)
  // A std::span is a view, so it may be a temporary:
  //   TensorData::Of(std::span<const float>(buffer, n), shape)
  template <typename T, size_t kExtent, typename Shape>
  [[nodiscard]] static TensorData Of(std::span<T, kExtent> data,
                                     const Shape& shape,
                                     bool requires_grad = false) noexcept {
    return Of(data.data(), data.size(), std::data(shape), std::size(shape),
              requires_grad);
  }
#endif
};

// A non-tensor value of an entry, built the way msprobe encodes Python
// values (docs/format.md, section 2.3). The plain kinds are
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
  // gone). daemon_path names the binary; empty: next to libtprobe
  // (<prefix>/bin/tprobed for <prefix>/lib/libtprobe.so).
  bool autostart_daemon = false;
  std::string daemon_path;
  // How long Create may wait for a daemon (and an autostarted one to come
  // up) before going on without one.
  int connect_timeout_ms = 5000;
};

// Counts since Create, over every daemon connection the Client had.
// produced = records_written + every dropped_*. Records committed into the
// rings of a daemon that then went away and left them unread count as
// dropped_no_daemon, not as written.
struct ClientCounters {
  uint64_t records_written = 0;
  uint64_t dropped_no_daemon = 0;
  uint64_t dropped_ring_full = 0;
  uint64_t dropped_too_large = 0;
  // Misuse, contained: uses of a Call that was not this Client's, not of
  // this step, already ended or not open on the calling thread (refused,
  // nothing sent), and calls still open when Step() ended their step
  // (closed without their entries; the step is marked incomplete).
  uint64_t calls_refused = 0;
  uint64_t calls_unclosed = 0;
  // Exceptions that stopped at the library's boundary (an allocation that
  // failed, say): each call that met one did nothing more and returned its
  // failure value (false, an unopened Call).
  uint64_t failures_contained = 0;
};

// A call between Begin* and EndCall: an opaque handle, copied by value, that
// names the Client that opened it, that Client's step and the call.
//   - A default Call was never opened (open() is false): the level does not
//     record this kind of call, capture is off, or it is an API nested in
//     another. EndCall and every Add* on it are no-ops (and not counted as
//     misuse).
//   - An open call that is not recorded() was counted and named but is
//     filtered out (scope, list), or data_mode keeps none of its direction,
//     or there is no daemon: Add* return false. It must still be ended.
//   - A recorded() call writes its entry at EndCall.
class Call {
 public:
  Call() noexcept = default;
  [[nodiscard]] bool open() const noexcept { return token_ != 0; }
  [[nodiscard]] bool recorded() const noexcept { return recorded_; }
  // N of the call's name; pass it to the Begin* of the backward call.
  [[nodiscard]] uint32_t index() const noexcept { return index_; }

 private:
  friend class Client;
  uint64_t token_ = 0;       // the call, unique in the process (0: none)
  uint64_t client_ = 0;      // the opening Client's identity (never reused)
  uint64_t generation_ = 0;  // its step generation: Step() makes it stale
  uint32_t index_ = 0;
  bool recorded_ = false;
};

class Client;

// An open call that ends itself (EndCall) when it goes out of scope, like
// NVTX's scoped_range. Returned by Client::Module, Cell and Api; move-only.
// The Add methods are Client::Add* on this call. A default ScopedCall holds
// nothing and every method on it is a no-op.
//
// Thread safety: like the Call it holds, used on the thread that opened it.
class [[nodiscard]] ScopedCall {
 public:
  ScopedCall() noexcept = default;
  ScopedCall(Client* client, Call call) noexcept
      : client_(client), call_(call) {}
  ScopedCall(ScopedCall&& other) noexcept
      : client_(std::exchange(other.client_, nullptr)), call_(other.call_) {}
  ScopedCall& operator=(ScopedCall&& other) noexcept {
    if (this != &other) {
      End();
      client_ = std::exchange(other.client_, nullptr);
      call_ = other.call_;
    }
    return *this;
  }
  ScopedCall(const ScopedCall&) = delete;
  ScopedCall& operator=(const ScopedCall&) = delete;
  ~ScopedCall() { End(); }

  // Ends the call now (writing its entry); later calls do nothing.
  inline void End() noexcept;

  [[nodiscard]] const Call& call() const noexcept { return call_; }
  [[nodiscard]] uint32_t index() const noexcept { return call_.index(); }
  [[nodiscard]] bool recorded() const noexcept { return call_.recorded(); }

  inline bool Input(const TensorData& tensor) noexcept;
  inline bool Output(const TensorData& tensor) noexcept;
  inline bool Input(const Value& value) noexcept;
  inline bool Output(const Value& value) noexcept;
  inline bool Parameter(std::string_view name,
                        const TensorData& tensor) noexcept;
  inline bool Kwarg(std::string_view key, const Value& value) noexcept;
  inline bool Stack(const std::vector<std::string>& lines) noexcept;

 private:
  Client* client_ = nullptr;
  Call call_;
};

// One rank's capture. Create it once per process (or per rank), Start/Stop/
// Step it as msprobe's PrecisionDebugger, and record calls with Module/Cell/
// Api (scoped) or Begin*/EndCall.
class TPROBE_EXPORT_ Client {
 public:
  // Reads and validates the config. Returns nullptr and sets *error (when
  // error is not null) for a bad config, for a libtprobe whose ABI is not
  // this header's TPROBE_ABI_VERSION, or when a daemon answered but refused
  // the registration (an unwritable dump_path, say) or runs as an untrusted
  // uid; a missing daemon is not an error.
  [[nodiscard]] static inline std::unique_ptr<Client> Create(
      const ClientOptions& options, std::string* error) noexcept;

  // Flushes: tells the daemon goodbye and waits (bounded by the connect
  // timeout) until it has written what this client sent. In a child forked
  // (without exec) from the process that made the Client it returns at
  // once: the child never wrote into the parent's rings and waits for
  // nothing.
  ~Client();

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // msprobe's lifecycle: Start begins collecting the current step (if the
  // config selects it), Stop pauses and flushes, Step ends the step (flush,
  // then call indices and filter ranges reset and the step number advances;
  // calls still open are closed as incomplete, see above). After the last
  // configured step, Start logs that tprobe has ended and nothing more is
  // collected; training is never stopped.
  void Start() noexcept;
  void Stop() noexcept;
  void Step() noexcept;

  // The step being collected (0 first).
  [[nodiscard]] uint32_t current_step() const noexcept;
  // Whether a daemon is connected right now.
  [[nodiscard]] bool connected() const noexcept;
  [[nodiscard]] ClientCounters counters() const noexcept;
  // Where this rank's tree goes: dump_path/step{N}/rank{R} for the current
  // step. Empty when out of memory.
  [[nodiscard]] inline std::string dump_dir() const noexcept;

  // Opens a module call "Module.{path}.{class_name}.{forward|backward}.{N}"
  // (levels L0 and mix; `path` is the module's dotted path below the root
  // model, which itself is never dumped). A forward call takes the module's
  // next index N; a backward call reuses `forward_index`, the index of the
  // forward call it belongs to (Call::index()). Calls nest: a call opened while
  // another is open on the thread is its child in construct.json.
  // REQUIRES: the Call is ended with EndCall on this thread in this step.
  [[nodiscard]] inline Call BeginModule(
      std::string_view path, std::string_view class_name,
      Direction direction = Direction::kForward,
      uint32_t forward_index = 0) noexcept;

  // The same for a MindSpore cell: "Cell.{path}.{class_name}.forward.{N}".
  [[nodiscard]] inline Call BeginCell(std::string_view path,
                                      std::string_view class_name,
                                      Direction direction = Direction::kForward,
                                      uint32_t forward_index = 0) noexcept;

  // Opens an API call "{prefix}.{api}.{N}.{forward|backward}" (levels L1 and
  // mix), e.g. BeginApi("Functional", "relu"). Only the last dotted part of
  // `api` is used ("linalg.norm" -> "norm"), as msprobe does. Only the
  // outermost API call of a thread is recorded: a forward API call begun
  // while another is open on the same thread returns a default Call and is
  // not counted. A backward call reuses `forward_index`; backward calls are
  // recorded after Stop() too, until Step(), as msprobe's are.
  [[nodiscard]] inline Call BeginApi(std::string_view prefix,
                                     std::string_view api,
                                     Direction direction = Direction::kForward,
                                     uint32_t forward_index = 0) noexcept;

  // BeginModule, BeginCell and BeginApi as a ScopedCall that ends itself:
  //   auto call = client->Module("layer1", "Linear");  // ends at scope exit
  [[nodiscard]] ScopedCall Module(std::string_view path,
                                  std::string_view class_name,
                                  Direction direction = Direction::kForward,
                                  uint32_t forward_index = 0) noexcept {
    return ScopedCall(this,
                      BeginModule(path, class_name, direction, forward_index));
  }
  [[nodiscard]] ScopedCall Cell(std::string_view path,
                                std::string_view class_name,
                                Direction direction = Direction::kForward,
                                uint32_t forward_index = 0) noexcept {
    return ScopedCall(this,
                      BeginCell(path, class_name, direction, forward_index));
  }
  [[nodiscard]] ScopedCall Api(std::string_view prefix, std::string_view api,
                               Direction direction = Direction::kForward,
                               uint32_t forward_index = 0) noexcept {
    return ScopedCall(this, BeginApi(prefix, api, direction, forward_index));
  }

  // Appends a tensor to the call's input (positional), output (positional)
  // or parameters (named by its position). Returns false when it was not
  // recorded (see Call, and data_mode: a forward call's inputs are kept only
  // when data_mode keeps forward inputs, and so on). The tensor goes into
  // this thread's ring at once, copied from its buffer, for an API call and a
  // module call alike: the buffer may change once AddTensor returns. The
  // entry that refers to it follows at EndCall (a module's after the entries
  // of the calls inside it), and the daemon keeps the tensor until then. A
  // malformed tensor (nbytes not numel times the element size, a negative
  // size, more than 64 dimensions) is written as null and returns false.
  bool AddTensor(const Call& call, Section section,
                 const TensorData& tensor) noexcept;

  // Appends any value (a scalar, a list of tensors, null for a missing
  // gradient, …) to input, output or parameters, like AddTensor. A
  // kParameter value is named by its position.
  inline bool AddValue(const Call& call, Section section,
                       const Value& value) noexcept;

  // Adds `key: value` to the input_kwargs of a forward call. Returns false
  // when it was not recorded (backward call, data_mode without forward
  // inputs, …).
  inline bool AddKwarg(const Call& call, std::string_view key,
                       const Value& value) noexcept;

  // Adds `name: tensor` to a module forward call's parameters.
  inline bool AddParameter(const Call& call, std::string_view name,
                           const TensorData& tensor) noexcept;

  // The call stack of a forward call for stack.json, innermost frame first,
  // each line in msprobe's form "File {path}, line {n}, in {func}, \n {code}".
  // Entries with the same lines share one stack.json group. Backward calls
  // have no stack: returns false for them.
  inline bool AddStack(const Call& call,
                       const std::vector<std::string>& lines) noexcept;

  // Closes the call and writes its entry (when recorded). Calls close
  // innermost first; closing an outer call also forgets any call still open
  // inside it on this thread, without writing their entries.
  void EndCall(const Call& call) noexcept;

  // Records the gradient of parameter `name` of a module (levels L0 and mix,
  // data_mode keeping backward data): the entry
  // "{Module|Cell}.{path}.{class_name}.parameters_grad.{K}" gets
  // `name: [grad]`. K counts the module's backward passes in the step: it
  // grows each time the first parameter reported in the step is reported
  // again, so the parameters of one pass share one entry. The gradient is
  // dumped when a forward call of the module was dumped in this step, or
  // when the entry name passes the filters itself. Not recorded while an API
  // call is open on the same thread. Returns false when it was not recorded.
  inline bool ParamGrad(std::string_view path, std::string_view class_name,
                        std::string_view name, const TensorData& grad,
                        ModuleStyle style = ModuleStyle::kModule) noexcept;

 private:
  class Impl;

  explicit Client(std::unique_ptr<Impl> impl);

  // What libtprobe exports: plain structs and (pointer, size) text only.
  static Client* CreateRaw(const detail::OptionsView& options,
                           detail::ErrorSink error) noexcept;
  size_t DumpDirRaw(char* buffer, size_t capacity) const noexcept;
  Call BeginRaw(detail::CallSite site, detail::Text scope, detail::Text name,
                Direction direction, uint32_t forward_index) noexcept;
  bool AddValueRaw(const Call& call, Section section,
                   const detail::ValueNode* nodes, size_t count) noexcept;
  bool AddKwargRaw(const Call& call, detail::Text key,
                   const detail::ValueNode* nodes, size_t count) noexcept;
  bool AddParameterRaw(const Call& call, detail::Text name,
                       const TensorData& tensor) noexcept;
  bool AddStackRaw(const Call& call, const detail::Text* lines,
                   size_t count) noexcept;
  bool ParamGradRaw(detail::Text path, detail::Text class_name,
                    detail::Text name, const TensorData& grad,
                    ModuleStyle style) noexcept;

  // Runs `f`, which may only throw std::bad_alloc from the caller's own
  // containers; false when it did.
  template <typename F>
  static bool Catch(F&& f) noexcept;
  static inline void SetError(void* context, const char* text,
                              size_t size) noexcept;

  std::unique_ptr<Impl> impl_;
};

}  // namespace tprobe

#include "tprobe/detail/client_inl.h"  // IWYU pragma: export

#undef TPROBE_EXPORT_

#endif  // TPROBE_INCLUDE_TPROBE_CLIENT_H_
