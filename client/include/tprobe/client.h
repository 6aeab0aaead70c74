#ifndef TPROBE_CLIENT_INCLUDE_TPROBE_CLIENT_H_
#define TPROBE_CLIENT_INCLUDE_TPROBE_CLIENT_H_

// libtprobe: the thin client that a training process links to dump what
// happens inside its modules and APIs.
//
// A Client captures hook events and tensor bytes and pushes them into
// shared-memory rings; the per-node daemon tprobed computes the statistics and
// writes msprobe's step{N}/rank{R}/ dump tree. The client never waits on the
// daemon: when none answers, every call below is a cheap no-op that is
// counted (counters().dropped_no_daemon), and a background thread reconnects
// with backoff. No exception ever leaves this API.
//
// Typical use, once per step:
//
//   auto client = tprobe::Client::Create(options, &error);
//   client->Start();
//   tprobe::Call call = client->BeginModule("layer1", "Linear");
//   client->AddTensor(call, tprobe::Section::kInput, x);
//   … run the module …
//   client->AddTensor(call, tprobe::Section::kOutput, y);
//   client->AddParameter(call, "weight", w);
//   client->EndCall(call);
//   client->Stop();
//   client->Step();
//
// Thread safety: Start, Stop, Step and counters may be called from any
// thread. Begin*/Add*/EndCall for one call must come from the thread that
// began it; different threads may record calls at the same time (each gets
// its own ring).
//
// This header is C++17 and includes no Boost, protobuf or spdlog header.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

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

// Where a tensor goes in its entry: forward input_args / output /
// parameters; for a backward call kInput and kOutput are msprobe's backward
// "input" (grads of the forward outputs) and "output" (grads of the inputs).
enum class Section : uint8_t { kInput = 0, kOutput = 1, kParameter = 2 };

enum class Direction : uint8_t { kForward = 0, kBackward = 1 };

struct ClientOptions {
  // msprobe-style config.json (task, dump_path, level, step, rank, …). Empty:
  // msprobe's defaults (statistics, L1, ./dump_path).
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

// An open call between Begin* and EndCall. Default-constructed: a call that
// is not recorded (all Add* on it are no-ops).
struct Call {
  uint64_t token = 0;
  bool recorded() const { return token != 0; }
};

class TPROBE_EXPORT Client {
 public:
  // Reads and validates the config. Returns nullptr and sets *error (when
  // error is not null) for a bad config; a missing daemon is not an error.
  static std::unique_ptr<Client> Create(const ClientOptions& options,
                                        std::string* error);

  // Flushes: tells the daemon goodbye and waits (bounded by the connect
  // timeout) until it has written what this client sent.
  ~Client();

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // msprobe's lifecycle: Start begins collecting the current step (if the
  // config selects it), Stop pauses and flushes, Step ends the step (flush,
  // then call indices reset and the step number advances).
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

  // Opens a module call named Module.{path}.{class_name}.{direction}.{N};
  // N counts this module's calls in the step.
  Call BeginModule(std::string_view path, std::string_view class_name,
                   Direction direction = Direction::kForward);

  // Appends a tensor to the call's input (positional), output (positional)
  // or parameters (named). Returns false when it was not recorded.
  bool AddTensor(const Call& call, Section section, const TensorData& tensor);
  bool AddParameter(const Call& call, std::string_view name,
                    const TensorData& tensor);

  // Closes the call and sends its entry.
  void EndCall(const Call& call);

  class Impl;

 private:
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tprobe

#endif  // TPROBE_CLIENT_INCLUDE_TPROBE_CLIENT_H_
