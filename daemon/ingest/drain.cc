#include "daemon/ingest/drain.h"

#include <algorithm>
#include <optional>
#include <variant>

#include "common/control/socket_path.h"
#include "common/record/codec.h"
#include "daemon/ingest/drainer.h"

namespace tprobe::daemon {

namespace {

// An Entry's or Call's place among the rings' records, and its step.
struct Order {
  uint64_t seq;
  uint32_t step;
};

std::optional<Order> OrderOf(const record::Decoded& d) {
  if (const auto* call = std::get_if<record::CallView>(&d)) {
    return Order{call->call.seq, call->call.step};
  }
  if (const auto* entry = std::get_if<record::EntryView>(&d)) {
    return Order{entry->entry.seq, entry->entry.step};
  }
  return std::nullopt;
}

}  // namespace

bool Drainer::ReachedCut(uint32_t ring_index, uint64_t cut,
                         const std::vector<uint64_t>* targets,
                         bool targets_final) {
  RingState& ring = state_.rings[ring_index];
  if (ring.records_read >= cut) return true;
  if (targets != nullptr && ring_index < targets->size() &&
      ring.reader.position() >= (*targets)[ring_index]) {
    return targets_final;
  }
  // The rank published the ring before it wrote the boundary, so an empty
  // ring means the records up to the cut will never come.
  auto peeked = ring.reader.Peek();
  if (!peeked.ok()) {
    Corrupt(ring_index, peeked.status().message());
    return true;
  }
  return !peeked.value();
}

bool Drainer::OnBoundary(uint32_t ring_index, const record::BoundaryView& v,
                         const std::vector<uint64_t>* targets,
                         bool targets_final, uint32_t* step) {
  v1::Request request;
  if (!request.ParseFromArray(v.request.data(),
                              static_cast<int>(v.request.size()))) {
    Corrupt(ring_index, "a boundary record that is not a Request");
    return true;
  }
  if (request.version() != control::kProtocolVersion) {
    Corrupt(ring_index, "a boundary record of protocol version " +
                            std::to_string(request.version()));
    return true;
  }
  const v1::StepLedger* ledger = nullptr;
  switch (request.body_case()) {
    case v1::Request::kStart:
      *step = request.start().step();
      break;
    case v1::Request::kStep:
      *step = request.step().step();
      if (request.step().has_ledger()) ledger = &request.step().ledger();
      break;
    case v1::Request::kGoodbye:
      *step = request.goodbye().step();
      if (request.goodbye().has_ledger()) ledger = &request.goodbye().ledger();
      break;
    default:
      Corrupt(ring_index,
              "a boundary record that is neither Start, Step nor "
              "Goodbye");
      return true;
  }
  if (ledger != nullptr) {
    const auto rings = static_cast<uint32_t>(std::min<size_t>(
        state_.rings.size(), static_cast<size_t>(ledger->ring_cuts_size())));
    for (uint32_t i = 0; i < rings; ++i) {
      if (i == ring_index) continue;
      if (!ReachedCut(i, ledger->ring_cuts(static_cast<int>(i)), targets,
                      targets_final)) {
        return state_.broken;
      }
    }
  }
  RingState& ring = state_.rings[ring_index];
  if (ring.pending) CloseTensor(ring, /*complete=*/false);
  state_.boundary = Boundary{ring_index, std::move(request)};
  return true;
}

bool Drainer::OverBound(uint32_t step,
                        std::optional<uint32_t> through_step) const {
  if (through_step && step <= *through_step) return false;
  if (!state_.assembler.WouldOpen(step)) return false;
  const ProducerLimits& limits = producer_.limits();
  return state_.assembler.open_trees() >= limits.max_open_steps ||
         (state_.assembler.open_trees() > 0 &&
          state_.assembler.open_bytes() >= limits.max_open_bytes);
}

size_t Drainer::Run(size_t max_records, const std::vector<uint64_t>* targets,
                    std::optional<uint32_t> through_step, bool targets_final) {
  size_t consumed = 0;
  auto done = [&] { return max_records != 0 && consumed >= max_records; };
  CheckFault();
  while (!state_.broken && !state_.boundary) {
    const size_t consumed_before = consumed;
    // A ProducerStats or ProducerBytes ahead of its tensor, or a boundary
    // ahead of records of other rings.
    bool waits_for_tensor = false;
    std::optional<uint32_t> best;
    uint64_t best_seq = 0;
    uint32_t best_step = 0;
    std::optional<record::Decoded> best_record;
    for (uint32_t i = 0; i < state_.rings.size(); ++i) {
      RingState& ring = state_.rings[i];
      for (;;) {
        if (targets != nullptr && i < targets->size() &&
            ring.reader.position() >= (*targets)[i]) {
          break;
        }
        auto peeked = ring.reader.Peek();
        if (!peeked.ok()) {
          Corrupt(i, peeked.status().message());
          return consumed;
        }
        if (!peeked.value()) break;
        const shm::RecordView view = *peeked.value();
        auto decoded = record::Decode(view.type, view.payload);
        if (!decoded.ok()) {
          Corrupt(i, decoded.status().message());
          return consumed;
        }
        if (!TargetRead(decoded.value())) {
          waits_for_tensor = true;
          break;
        }
        if (const auto* b =
                std::get_if<record::BoundaryView>(&decoded.value())) {
          uint32_t step = 0;
          if (OnBoundary(i, *b, targets, targets_final, &step)) {
            return consumed;  // ready (state_.boundary), or corrupt
          }
          // The records of the step it closes are read whatever the bound.
          through_step = std::max(through_step.value_or(0), step);
          waits_for_tensor = true;
          break;
        }
        if (auto order = OrderOf(decoded.value())) {
          if (!best || order->seq < best_seq) {
            best = i;
            best_seq = order->seq;
            best_step = order->step;
            best_record = std::move(decoded).value();
          }
          break;
        }
        ApplyLocal(ring, decoded.value());
        if (state_.broken) return consumed;  // a bound was exceeded
        ring.reader.Release();
        ++ring.records_read;
        ++consumed;
        if (done()) return consumed;
      }
    }
    if (!best) {
      // Another ring may have read the tensor a ProducerStats (or Bytes)
      // waits for.
      if (waits_for_tensor && consumed > consumed_before) continue;
      break;
    }
    if (OverBound(best_step, through_step)) break;
    if (!ApplyOrdered(*best, *best_record)) return consumed;
    state_.rings[*best].reader.Release();
    ++state_.rings[*best].records_read;
    ++consumed;
    if (done()) break;
  }
  return consumed;
}

bool Drainer::ApplyLocal(RingState& ring, record::Decoded& decoded) {
  if (auto* chunk = std::get_if<record::ChunkView>(&decoded)) {
    OnChunk(ring, *chunk);
    return true;
  }
  if (ring.pending) CloseTensor(ring, /*complete=*/false);
  if (auto* intern = std::get_if<record::InternView>(&decoded)) {
    OnIntern(*intern);
    return true;
  }
  if (auto* stats = std::get_if<record::ProducerStatsView>(&decoded)) {
    OnProducerStats(static_cast<uint32_t>(&ring - state_.rings.data()), *stats);
    return true;
  }
  if (auto* bytes = std::get_if<record::ProducerBytesView>(&decoded)) {
    OnProducerBytes(ring, *bytes);
    return true;
  }
  if (auto* tensor = std::get_if<record::TensorView>(&decoded)) {
    if (ring.tensors.size() >= producer_.limits().max_waiting_tensors) {
      Corrupt(static_cast<uint32_t>(&ring - state_.rings.data()),
              "more than " +
                  std::to_string(producer_.limits().max_waiting_tensors) +
                  " tensors without an entry");
      return true;
    }
    OnTensor(ring, *tensor);
    return true;
  }
  return false;
}

bool Drainer::ApplyOrdered(uint32_t ring_index,
                           const record::Decoded& decoded) {
  RingState& ring = state_.rings[ring_index];
  if (ring.pending) CloseTensor(ring, /*complete=*/false);
  if (const auto* call = std::get_if<record::CallView>(&decoded)) {
    OnCall(ring, *call);
    return true;
  }
  return HoldOrApply(ring_index, std::get<record::EntryView>(decoded));
}

size_t DrainSome(const Producer& producer, ProducerState& state,
                 size_t max_records, spdlog::logger& log) {
  if (state.closed) return 0;
  Drainer drainer(producer, state, log);
  const size_t n = drainer.Run(max_records, nullptr);
  drainer.CheckCounters();
  return n;
}

size_t DrainTo(const Producer& producer, ProducerState& state,
               const std::vector<uint64_t>& targets, spdlog::logger& log,
               std::optional<uint32_t> through_step, bool targets_final) {
  if (state.closed) return 0;
  Drainer drainer(producer, state, log);
  const size_t n = drainer.Run(0, &targets, through_step, targets_final);
  drainer.CheckCounters();
  return n;
}

std::vector<uint64_t> CommittedHeads(const Producer& producer) {
  std::vector<uint64_t> heads;
  for (uint32_t i = 0; i < producer.segment().ring_count(); ++i) {
    heads.push_back(producer.segment().ring_header(i)->head.load(
        std::memory_order_acquire));
  }
  return heads;
}

void DrainCommitted(const Producer& producer, ProducerState& state,
                    spdlog::logger& log) {
  // Every step is the command's: the bound holds nothing back.
  DrainTo(producer, state, CommittedHeads(producer), log, UINT32_MAX,
          /*targets_final=*/true);
}

void ReleaseBoundary(ProducerState& state) {
  if (!state.boundary) return;
  RingState& ring = state.rings[state.boundary->ring];
  state.boundary.reset();
  // Peeked again: Release frees the record the last Peek returned.
  auto peeked = ring.reader.Peek();
  if (!peeked.ok() || !peeked.value()) return;
  ring.reader.Release();
  // Read, and no step's: a boundary is not one of the step's records.
  ++ring.records_read;
  ++ring.records_settled;
}

}  // namespace tprobe::daemon
