// The producer-statistics path of the encoder (producer_stats.h).

#include "client/python/binding/producer_stats.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace tprobe::python {
namespace py = pybind11;

namespace {

// Which tensors the framework reduces.
enum class Mode : uint8_t { kNone, kDevice, kAll };

std::atomic<Mode> g_mode{Mode::kNone};
std::atomic<const client::Session*> g_session{nullptr};
// The adapter's callables (strong references, never freed: they live as
// long as the module).
PyObject* g_hook = nullptr;
PyObject* g_flush = nullptr;
// A tensor was handed to the hook since the last flush began: a flush
// before any has nothing to wait for (a step that collected nothing).
std::atomic<bool> g_handed{false};
std::atomic<bool> g_tensors_on_host{true};
// The summary modes a reducer may compute, as the hook is told them;
// kTensor: the statistics and bytes (tasks tensor and overflow_check).
enum class Summary : uint8_t { kStatistics, kXor, kMd5, kTensor };
constexpr const char* kSummaryNames[] = {"statistics", "xor", "md5", "tensor"};
constexpr uint8_t Bit(Summary s) { return uint8_t{1} << static_cast<int>(s); }
// The summary modes the adapter's reducers compute (a bit each).
std::atomic<uint8_t> g_reduces{Bit(Summary::kStatistics)};
// The session's summary_mode, when the hook computes it.
std::atomic<Summary> g_summary{Summary::kStatistics};
// Tensors whose statistics the adapter failed to compute or write
// (ProducerStatsFailures).
std::atomic<uint64_t> g_failures{0};
std::atomic<bool> g_failure_named{false};

// Counts `tensors` whose statistics will never come (their entries are
// written incomplete) and names the first failure on stderr. Called with the
// Python error set, which it clears.
void CountFailure(uint64_t tensors, const char* where) {
  g_failures.fetch_add(tensors, std::memory_order_relaxed);
  if (g_failure_named.exchange(true, std::memory_order_relaxed)) {
    PyErr_Clear();
    return;
  }
  std::string what = "an unknown error";
  if (PyErr_Occurred() != nullptr) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (value != nullptr) {
      if (PyObject* text = PyObject_Str(value)) {
        if (const char* utf8 = PyUnicode_AsUTF8(text)) what = utf8;
        Py_DECREF(text);
      }
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    PyErr_Clear();
  }
  std::fprintf(stderr,
               "tprobe: the framework's statistics %s failed (%s); the tensor "
               "is written incomplete, and every such tensor is counted in "
               "Session.counters()['producer_stats_failures']\n",
               where, what.substr(0, 500).c_str());
}

// What the hook computes for `c`: task statistics' summary_mode, the
// statistics and bytes under task tensor and overflow_check (summary_mode
// statistics only: the daemon finds an overflow from Max and Min, and
// keeps the bytes of the calls that overflow), nothing under structure.
std::optional<Summary> SummaryOf(const config::Config& c) {
  if (c.task == config::Task::kTensor ||
      c.task == config::Task::kOverflowCheck) {
    if (c.summary_mode != config::SummaryMode::kStatistics) return std::nullopt;
    return Summary::kTensor;
  }
  if (c.task != config::Task::kStatistics) return std::nullopt;
  switch (c.summary_mode) {
    case config::SummaryMode::kStatistics:
      return Summary::kStatistics;
    case config::SummaryMode::kXor:
      return Summary::kXor;
    case config::SummaryMode::kMd5:
      return Summary::kMd5;
  }
  return std::nullopt;
}

// Where a tensor's Tensor record went, as the hook is handed it: ring u32,
// connection generation u64, ref u32, step u32, little-endian.
struct Place {
  client::RingSlot slot;
  uint32_t ref = 0;
  uint32_t step = 0;
};
constexpr size_t kPlaceBytes = 20;
// A place and its 4 StatKind bytes, as the statistics thread hands them back.
constexpr size_t kPlaceWithKinds = kPlaceBytes + 4;

void PutPlace(const Place& place, char* out) {
  std::memcpy(out, &place.slot.ring, 4);
  std::memcpy(out + 4, &place.slot.generation, 8);
  std::memcpy(out + 12, &place.ref, 4);
  std::memcpy(out + 16, &place.step, 4);
}

Place ReadPlace(const char* in) {
  Place place;
  std::memcpy(&place.slot.ring, in, 4);
  std::memcpy(&place.slot.generation, in + 4, 8);
  std::memcpy(&place.ref, in + 12, 4);
  std::memcpy(&place.step, in + 16, 4);
  return place;
}

}  // namespace

void FollowStatisticsOn(const client::Session* session) {
  g_session.store(session, std::memory_order_release);
  Mode mode = Mode::kNone;
  std::optional<Summary> summary;
  if (session != nullptr) {
    const config::Config& c = session->config();
    summary = SummaryOf(c);
    if (summary &&
        (g_reduces.load(std::memory_order_relaxed) & Bit(*summary)) != 0) {
      switch (c.statistics_on) {
        case config::StatisticsOn::kAuto:
          mode = Mode::kDevice;
          break;
        case config::StatisticsOn::kFramework:
          mode = Mode::kAll;
          break;
        case config::StatisticsOn::kDaemon:
          break;
      }
    }
  }
  g_summary.store(summary.value_or(Summary::kStatistics),
                  std::memory_order_relaxed);
  g_mode.store(mode, std::memory_order_release);
}

bool ProducerComputes(bool is_cpu) {
  const Mode mode = g_mode.load(std::memory_order_acquire);
  if (mode == Mode::kNone || g_hook == nullptr) return false;
  return mode == Mode::kAll || !is_cpu;
}

bool TensorsOnHost() {
  return g_tensors_on_host.load(std::memory_order_relaxed);
}

void EncodeByProducer(client::EntryBuilder& entry, py::handle t, DType dtype,
                      std::span<const int64_t> shape, bool requires_grad,
                      size_t nbytes, record::ValueWriter& out) {
  const uint32_t ref = client::NextTensorRef();
  out.TensorRef(ref);
  const Summary summary_mode = g_summary.load(std::memory_order_relaxed);
  std::optional<client::RingSlot> slot =
      entry.recorder().WriteTensorAwaitingStats(
          ref, dtype, shape, requires_grad, nbytes,
          /*bytes_follow=*/summary_mode == Summary::kTensor);
  if (!slot) return;  // dropped and counted: the entry's tensor is incomplete
  const client::Session* session = g_session.load(std::memory_order_acquire);
  const uint32_t step = session != nullptr ? session->step() : 0;
  char place[kPlaceBytes];
  PutPlace(Place{*slot, ref, step}, place);
  static PyObject* const names[] = {
      PyUnicode_InternFromString(kSummaryNames[0]),
      PyUnicode_InternFromString(kSummaryNames[1]),
      PyUnicode_InternFromString(kSummaryNames[2]),
      PyUnicode_InternFromString(kSummaryNames[3])};
  static_assert(std::size(names) == std::size(kSummaryNames));
  PyObject* summary = names[static_cast<int>(summary_mode)];
  if (summary == nullptr) return;  // out of memory at the first call
  g_handed.store(true, std::memory_order_relaxed);
  PyObject* result = PyObject_CallFunctionObjArgs(
      g_hook, t.ptr(), py::bytes(place, kPlaceBytes).ptr(), summary, nullptr);
  if (result == nullptr) {
    // The hook failed: no statistics come, and the daemon writes the tensor
    // incomplete when its step is settled.
    CountFailure(1, "hook");
    return;
  }
  Py_DECREF(result);
}

void FlushProducerStats() {
  if (g_flush == nullptr || !g_handed.exchange(false)) return;
  PyObject* result = PyObject_CallNoArgs(g_flush);
  if (result == nullptr) {
    g_handed.store(true, std::memory_order_relaxed);  // the next one tries
    CountFailure(0, "flush");
    return;
  }
  Py_DECREF(result);
}

uint64_t ProducerStatsFailures() {
  return g_failures.load(std::memory_order_relaxed);
}

size_t WriteProducerStats(client::Recorder& core, std::string_view values,
                          std::string_view places) {
  constexpr size_t kPlace = kPlaceWithKinds;
  constexpr size_t kValues = 4 * sizeof(uint64_t);
  const size_t n = places.size() / kPlace;
  if (places.size() % kPlace != 0 || values.size() != n * kValues) return 0;
  size_t written = 0;
  for (size_t i = 0; i < n; ++i) {
    const char* p = places.data() + i * kPlace;
    const Place place = ReadPlace(p);
    record::ProducerStatsRecord r{};
    r.ref = place.ref;
    r.step = place.step;
    std::memcpy(r.kinds, p + kPlaceBytes, 4);
    std::memcpy(r.values, values.data() + i * kValues, kValues);
    for (int k = 0; k < 4; ++k) {
      // A null statistic carries no value; a bool is 0 or 1.
      if (r.kinds[k] == static_cast<uint8_t>(record::StatKind::kNull)) {
        r.values[k] = 0;
      } else if (r.kinds[k] == static_cast<uint8_t>(record::StatKind::kBool)) {
        r.values[k] = r.values[k] != 0 ? 1 : 0;
      }
    }
    if (core.WriteProducerStats(place.slot, r)) ++written;
  }
  return written;
}

size_t WriteProducerBytes(client::Recorder& core,
                          std::span<const HostBytes> copies,
                          std::string_view places) {
  if (places.size() != copies.size() * kPlaceWithKinds) return 0;
  size_t written = 0;
  for (size_t i = 0; i < copies.size(); ++i) {
    const Place place = ReadPlace(places.data() + i * kPlaceWithKinds);
    if (core.WriteProducerBytes(place.slot, place.ref, place.step,
                                copies[i].data, copies[i].size)) {
      ++written;
    }
  }
  return written;
}

size_t WriteProducerStatsFromPython(client::Session* session, py::bytes values,
                                    py::bytes places) {
  if (session == nullptr) return 0;
  char* vp = nullptr;
  char* pp = nullptr;
  Py_ssize_t vn = 0;
  Py_ssize_t pn = 0;
  if (PyBytes_AsStringAndSize(values.ptr(), &vp, &vn) != 0 ||
      PyBytes_AsStringAndSize(places.ptr(), &pp, &pn) != 0) {
    PyErr_Clear();
    return 0;
  }
  const std::string_view v(vp, static_cast<size_t>(vn));
  const std::string_view p(pp, static_cast<size_t>(pn));
  py::gil_scoped_release release;
  return WriteProducerStats(session->recorder(), v, p);
}

size_t WriteProducerBytesFromPython(client::Session* session,
                                    const py::list& copies, py::bytes places) {
  if (session == nullptr) return 0;
  std::vector<HostBytes> host;
  host.reserve(copies.size());
  for (py::handle copy : copies) {
    const auto pair = py::cast<py::tuple>(copy);
    if (pair.size() != 2) throw py::value_error("copies: (address, size)");
    host.push_back({reinterpret_cast<const void*>(py::cast<uintptr_t>(pair[0])),
                    py::cast<size_t>(pair[1])});
  }
  const std::string_view p = places;
  py::gil_scoped_release release;
  return WriteProducerBytes(session->recorder(), host, p);
}

void DefineProducerStats(py::module_& m) {
  m.def(
      "set_producer_stats",
      [](py::object hook, py::object flush, bool tensors_on_host,
         const py::iterable& summaries) {
        uint8_t reduces = 0;
        for (py::handle item : summaries) {
          const std::string name = py::cast<std::string>(item);
          bool known = false;
          for (size_t i = 0; i < std::size(kSummaryNames); ++i) {
            if (name == kSummaryNames[i]) {
              reduces |= uint8_t{1} << i;
              known = true;
            }
          }
          if (!known) {
            throw py::value_error("summaries: unknown summary mode \"" + name +
                                  "\"");
          }
        }
        g_tensors_on_host.store(tensors_on_host, std::memory_order_relaxed);
        g_reduces.store(reduces, std::memory_order_relaxed);
        Py_XDECREF(g_hook);
        Py_XDECREF(g_flush);
        g_hook = hook.is_none() ? nullptr : hook.release().ptr();
        g_flush = flush.is_none() ? nullptr : flush.release().ptr();
      },
      py::arg("hook"), py::arg("flush"), py::arg("tensors_on_host") = true,
      py::arg("summaries") = py::make_tuple("statistics"),
      "Sets the adapter's statistics hook, hook(tensor, place: bytes, "
      "summary: str), which reduces a tensor on its device without waiting "
      "(to the session's summary_mode: 'statistics', 'xor' or 'md5'; "
      "'tensor' under tasks tensor and overflow_check: its statistics and a "
      "host copy of its bytes) and later hands the results to "
      "Session.write_producer_stats "
      "(and the bytes to Session.write_producer_bytes), and "
      "flush(), which returns once every result handed to the hook has been "
      "written. None for both: the daemon computes every statistic. "
      "tensors_on_host: the framework's tensors that carry no device of "
      "their own live on the host (MindSpore's device_target is CPU; under "
      "statistics_on auto they then go to the daemon). summaries: "
      "the summary modes the hook computes; the daemon computes the "
      "others.");
  m.def(
      "producer_summary",
      [](bool is_cpu) -> py::object {
        if (!ProducerComputes(is_cpu)) return py::none();
        return py::str(kSummaryNames[static_cast<size_t>(
            g_summary.load(std::memory_order_relaxed))]);
      },
      py::arg("is_cpu"),
      "What the statistics hook computes for a tensor on the host (is_cpu) "
      "or on a device under the current session's config: 'statistics', "
      "'xor', 'md5' or 'tensor' (as the hook is told), or None when the "
      "daemon computes it.");
  m.def(
      "count_producer_stats_failure",
      [](const py::bytes& places, const std::string& error) {
        PyErr_SetString(PyExc_RuntimeError, error.c_str());
        CountFailure(std::string_view(places).size() / kPlaceWithKinds,
                     "thread");
      },
      py::arg("places"), py::arg("error"),
      "Counts the tensors of `places` (as for write_producer_stats) whose "
      "statistics the adapter's statistics thread "
      "could not compute or write (their entries are written incomplete; "
      "Session.counters()['producer_stats_failures']); the first `error` is "
      "named on stderr.");
}

}  // namespace tprobe::python
