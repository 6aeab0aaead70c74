// The producer-statistics path of the encoder (tprobe.statistics_on,
// docs/architecture.md, "The path of a device tensor"): a tensor whose
// statistics the framework computes is written as a Tensor record with
// record::kTensorStatsByProducer and no bytes, and handed to the adapter's
// statistics hook (tprobe._C.set_producer_stats), which reduces it with the
// framework's own ops on its device, without waiting for them. The adapter's
// statistics thread later writes the results as ProducerStats records
// (PySession.write_producer_stats) once they reached the host.
//
// Thread safety: every function needs the GIL; the mode is an atomic that
// the session sets at Start and Step and any thread reads.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_PRODUCER_STATS_H_
#define TPROBE_CLIENT_PYTHON_BINDING_PRODUCER_STATS_H_

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "client/entry_builder.h"
#include "client/session.h"
#include "common/record/writer.h"

namespace tprobe::python {

// Follows `session`'s config (task statistics, with a summary_mode the
// adapter's reducers compute: statistics and xor, and md5 under PyTorch;
// tasks tensor and overflow_check under PyTorch, whose bytes the adapter
// copies without waiting too; the other tasks write the bytes from
// the hook): which tensors the framework reduces, and to what. nullptr:
// none (the session is gone).
void FollowStatisticsOn(const client::Session* session);

// Whether the framework computes the statistics of a tensor on the host
// (is_cpu) or on a device, with a statistics hook set.
bool ProducerComputes(bool is_cpu);

// Whether the framework's tensors that carry no device of their own
// (MindSpore's) live on the host, as the adapter said with
// set_producer_stats (its descriptor's tensors_on_host).
bool TensorsOnHost();

// Writes `t`'s awaiting Tensor record and its ref into `out`, and calls the
// statistics hook with the tensor and the 20 bytes that place it (ring u32,
// connection generation u64, ref u32, step u32, little-endian). The entry
// refers to the tensor even when its record was dropped (the daemon then
// renders it incomplete). REQUIRES: ProducerComputes was true for it.
void EncodeByProducer(client::EntryBuilder& entry, pybind11::handle t,
                      DType dtype, std::span<const int64_t> shape,
                      bool requires_grad, size_t nbytes,
                      record::ValueWriter& out);

// Calls the adapter's flush (set_producer_stats): every statistic handed to
// the hook is written into the rings when it returns; not called when no
// tensor was handed since the last flush. Called before a Step and at
// Close, so a step's cut covers its statistics.
void FlushProducerStats();

// Tensors whose statistics the adapter failed to compute or write, in this
// process (its hook raised, or its statistics thread reported a failure):
// each is written incomplete.
uint64_t ProducerStatsFailures();

// Writes ProducerStats records from this thread: `values` holds 4 uint64 per
// tensor, `places` 24 bytes per tensor (the 20 bytes EncodeByProducer
// handed out, then the 4 StatKind bytes). Returns how many were written.
size_t WriteProducerStats(client::Recorder& core, std::string_view values,
                          std::string_view places);

// Host memory that holds a tensor's bytes (a pinned copy, or a host clone).
struct HostBytes {
  const void* data;
  size_t size;
};

// Writes ProducerBytes records and their chunks from this thread (tasks
// tensor and overflow_check): the bytes of each tensor at `copies[i]`, placed
// by the i-th 24 bytes of `places` (as for WriteProducerStats; the kind bytes
// are unused). Returns how many were written whole. Needs no GIL.
size_t WriteProducerBytes(client::Recorder& core,
                          std::span<const HostBytes> copies,
                          std::string_view places);

// Session.write_producer_stats(values, places) and
// Session.write_producer_bytes(copies, places) of `session` (nullptr:
// closed, nothing is written): WriteProducerStats and WriteProducerBytes
// from the adapter's statistics thread, with the GIL released. `copies`
// holds (address, size) of host memory the caller keeps alive for the
// call; another shape raises ValueError.
size_t WriteProducerStatsFromPython(client::Session* session,
                                    pybind11::bytes values,
                                    pybind11::bytes places);
size_t WriteProducerBytesFromPython(client::Session* session,
                                    const pybind11::list& copies,
                                    pybind11::bytes places);

// tprobe._C.set_producer_stats(hook, flush) and
// tprobe._C.count_producer_stats_failure(places, error).
void DefineProducerStats(pybind11::module_& m);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_PRODUCER_STATS_H_
