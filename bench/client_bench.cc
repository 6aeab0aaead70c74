// Hot-path benchmarks for the client core, each beside its baseline in the
// same run: a hook event with capture off and on, and a tensor push into the
// ring against a plain memcpy of the same bytes. A real segment is drained
// by a consumer thread, as the daemon would.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "client/entry_builder.h"
#include "client/recorder.h"
#include "client/session.h"
#include "common/config/config.h"
#include "common/shm/ring.h"
#include "common/shm/segment.h"

namespace tprobe::client {
namespace {

// A segment attached to a Recorder, with one thread draining its data ring
// (the boundary ring after it takes no hook records).
class Rig {
 public:
  explicit Rig(uint64_t ring_bytes)
      : recorder_(config::FullRingPolicy::kBlock, 1000) {
    auto created =
        shm::Segment::Create("tprobe.bench", 2, ring_bytes,
                             config::kBoundaryRingBytes, ::getpid(), 0);
    consumer_seg_ = std::move(created).value();
    recorder_.Attach(std::move(shm::Segment::Open(::fcntl(consumer_seg_->fd(),
                                                          F_DUPFD_CLOEXEC, 0),
                                                  consumer_seg_->name()))
                         .value());
    drainer_ = std::thread([this] {
      shm::RingReader reader(consumer_seg_->ring_header(0),
                             consumer_seg_->ring_data(0));
      while (!stop_.load(std::memory_order_relaxed)) {
        auto rec = reader.Peek();
        if (rec.ok() && rec.value()) {
          reader.Release();
        }
      }
    });
  }
  ~Rig() {
    stop_ = true;
    drainer_.join();
  }
  Recorder& recorder() { return recorder_; }

 private:
  std::unique_ptr<shm::Segment> consumer_seg_;
  Recorder recorder_;
  std::atomic<bool> stop_{false};
  std::thread drainer_;
};

// What every adapter's hook does first while capture is off (not started,
// or a step/rank the config does not select): one acquire load.
void BM_HookEventCaptureOff(benchmark::State& state) {
  SessionOptions options;
  options.socket_path = "/nonexistent/tprobe-bench.sock";
  options.connect_timeout_ms = 0;
  auto session = std::move(Session::Create(options)).value();
  for (auto _ : state) {
    benchmark::DoNotOptimize(session->collecting());
  }
}
BENCHMARK(BM_HookEventCaptureOff);

// The core's write with no daemon attached: one branch and a counter.
void BM_HookEventNoDaemon(benchmark::State& state) {
  Recorder core(config::FullRingPolicy::kDrop, 0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(core.WriteCall(true, 0, 1, record::CallKind::kApi,
                                            record::Direction::kForward));
  }
}
BENCHMARK(BM_HookEventNoDaemon);

void BM_HookEventCaptureOnNoPayload(benchmark::State& state) {
  Rig rig(1 << 22);
  const uint32_t id =
      rig.recorder().Intern(record::InternKind::kName, "Torch.add");
  for (auto _ : state) {
    benchmark::DoNotOptimize(rig.recorder().WriteCall(
        true, 0, id, record::CallKind::kApi, record::Direction::kForward));
  }
}
BENCHMARK(BM_HookEventCaptureOnNoPayload);

// The same event's latency distribution: each event timed alone with
// steady_clock, the clock's own cost (the median of an empty timing, taken
// in the same run) subtracted. Reports the median and p99.9 in ns as
// counters; the time column is the timed loop's and means nothing here.
void BM_HookEventCaptureOnLatency(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  Rig rig(1 << 22);
  const uint32_t id =
      rig.recorder().Intern(record::InternKind::kName, "Torch.add");
  std::vector<int64_t> events, empty;
  events.reserve(static_cast<size_t>(state.max_iterations));
  empty.reserve(static_cast<size_t>(state.max_iterations));
  for (auto _ : state) {
    const auto t0 = Clock::now();
    benchmark::DoNotOptimize(rig.recorder().WriteCall(
        true, 0, id, record::CallKind::kApi, record::Direction::kForward));
    const auto t1 = Clock::now();
    const auto t2 = Clock::now();
    events.push_back((t1 - t0).count());
    empty.push_back((t2 - t1).count());
  }
  auto percentile = [](std::vector<int64_t>& v, double q) {
    const auto k = static_cast<size_t>(q * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
    return static_cast<double>(v[k]);
  };
  if (events.empty()) return;
  const double clock_ns = percentile(empty, 0.5);
  state.counters["p50_ns"] = percentile(events, 0.5) - clock_ns;
  state.counters["p999_ns"] = percentile(events, 0.999) - clock_ns;
  state.counters["clock_ns"] = clock_ns;
  // The timer's own p99.9: how much of the events' tail is the clock's.
  state.counters["clock_p999_ns"] = percentile(empty, 0.999);
}
BENCHMARK(BM_HookEventCaptureOnLatency)->Iterations(2000000);

// An API call's entry as the front ends build it: msprobe's parts with a
// tensor ref each (the tensors themselves are BM_TensorPush), written as one
// Entry record of the value stream.
void BM_EntryWrite(benchmark::State& state) {
  Rig rig(1 << 22);
  const uint32_t id =
      rig.recorder().Intern(record::InternKind::kName, "Torch.add.0.forward");
  for (auto _ : state) {
    EntryBuilder entry(rig.recorder());
    record::ValueWriter& args = entry.Open(Part::kInputArgs);
    args.TensorRef(1);
    args.Typed("int");
    args.Int(1);
    entry.Open(Part::kInputKwargs);
    entry.Open(Part::kOutput).TensorRef(2);
    benchmark::DoNotOptimize(entry.Write(0, id, 0));
  }
}
BENCHMARK(BM_EntryWrite);

// The Session's work on one API call (BeginApi, CheckEnd, EndCall: its
// index, name and filters) without a daemon, so no record is written (that
// is BM_HookEventCaptureOnNoPayload): L1 with risk_level FOCUS (PyTorch's
// default), with a scope set, and with neither filter; and a parameter
// gradient at mix. No lock is taken in any of them.
std::unique_ptr<Session> SessionWithConfig(const std::string& json) {
  const std::string path =
      "/tmp/tprobe-bench-" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << json;
  SessionOptions options;
  options.config_path = path;
  options.socket_path = "/nonexistent/tprobe-bench.sock";
  options.connect_timeout_ms = 0;
  auto session = std::move(Session::Create(options)).value();
  std::remove(path.c_str());
  session->Start();
  return session;
}

void BM_SessionApiCall(benchmark::State& state) {
  const char* configs[] = {
      R"({"level": "L1"})",
      R"({"level": "L1", "statistics": {"scope":
          ["Functional.relu.0.forward", "Torch.add.0.forward"]}})",
      R"({"level": "L1", "risk_level": "ALL"})",
  };
  const char* labels[] = {"risk_level FOCUS", "scope", "no filter"};
  auto session = SessionWithConfig(configs[state.range(0)]);
  state.SetLabel(labels[state.range(0)]);
  CallPlan plan;
  for (auto _ : state) {
    if (session->BeginApi("Torch.matmul", true, 0, &plan)) {
      session->CheckEnd(&plan);
      session->EndCall(plan);
    }
    benchmark::DoNotOptimize(plan.index);
  }
}
BENCHMARK(BM_SessionApiCall)->DenseRange(0, 2);

void BM_SessionParamGrad(benchmark::State& state) {
  auto session = SessionWithConfig(R"({"level": "mix"})");
  CallPlan plan;
  for (auto _ : state) {
    session->BeginParamGrad("Module.layers.0.attn.Linear", "weight", &plan);
    benchmark::DoNotOptimize(plan.index);
  }
}
BENCHMARK(BM_SessionParamGrad);

// The ring size of BM_TensorPush's segment.
constexpr size_t kPushRingBytes = size_t{1} << 26;

// memcpy into the same, cache-hot destination at every iteration.
void BM_MemcpyBaseline(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<std::byte> src(bytes, std::byte{1}), dst(bytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_MemcpyBaseline)->Arg(1 << 16)->Arg(1 << 20);

// A copy into a destination that walks a buffer of the ring's size, as the
// push does: each iteration writes lines not touched since a full turn.
template <void (*kCopy)(std::byte*, const void*, size_t)>
void CopyCold(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<std::byte> src(bytes, std::byte{1}), dst(kPushRingBytes);
  size_t at = 0;
  for (auto _ : state) {
    kCopy(dst.data() + at, src.data(), bytes);
    benchmark::ClobberMemory();
    at = (at + bytes) % kPushRingBytes;
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}
void Memcpy(std::byte* dst, const void* src, size_t n) {
  std::memcpy(dst, src, n);
}
void BM_MemcpyColdBaseline(benchmark::State& state) { CopyCold<Memcpy>(state); }
BENCHMARK(BM_MemcpyColdBaseline)->Arg(1 << 16)->Arg(1 << 20);

void BM_TensorPush(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  Rig rig(kPushRingBytes);
  std::vector<std::byte> src(bytes, std::byte{1});
  const int64_t shape[1] = {static_cast<int64_t>(bytes / 4)};
  for (auto _ : state) {
    benchmark::DoNotOptimize(rig.recorder().WriteTensor(
        1, DType::kFloat32, shape, false, src.data(), bytes));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_TensorPush)->Arg(1 << 16)->Arg(1 << 20);

}  // namespace
}  // namespace tprobe::client
