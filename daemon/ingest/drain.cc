// The drain's ring loop: the seq order across rings, the boundaries and
// the bounds on read-ahead (drainer.h), and the drain's entry points
// (drain.h).

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
  const uint64_t position = state_.rings[ring_index].reader.position();
  auto waiting = std::find_if(
      waiting_.begin(), waiting_.end(), [&](const WaitingBoundary& w) {
        return w.ring == ring_index && w.position == position;
      });
  if (waiting == waiting_.end()) {
    v1::Request parsed;
    if (!parsed.ParseFromArray(v.request.data(),
                               static_cast<int>(v.request.size()))) {
      Corrupt(ring_index, "a boundary record that is not a Request");
      return true;
    }
    waiting = waiting_.insert(
        waiting_.end(),
        WaitingBoundary{ring_index, position, std::move(parsed)});
  }
  v1::Request& request = waiting->request;
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
  // Closing a tensor incomplete keeps no bytes, so it cannot fail.
  Report(ring_index, state_.tensors.ClosePending(ring_index, Rules()));
  state_.boundary = Boundary{ring_index, std::move(request)};
  waiting_.erase(waiting);
  return true;
}

bool Drainer::OverBound(uint32_t step,
                        std::optional<uint32_t> through_step) const {
  if (through_step && step <= *through_step) return false;
  if (!state_.assembler.WouldOpen(step)) return false;
  const RankLimits& limits = rank_.limits();
  return state_.assembler.open_trees() >= limits.max_open_steps ||
         (state_.assembler.open_trees() > 0 &&
          state_.assembler.open_bytes() >= limits.max_open_bytes);
}

struct Drainer::Pass {
  size_t max_records;  // 0: no limit
  const std::vector<uint64_t>* targets;
  std::optional<uint32_t> through_step;
  bool targets_final;
  size_t consumed = 0;
  // A ProducerStats or ProducerBytes ahead of its tensor, or a boundary
  // ahead of records of other rings.
  bool waits = false;
  // The Entry or Call record of the lowest seq seen, its ring and step.
  std::optional<uint32_t> best;
  uint64_t best_seq = 0;
  uint32_t best_step = 0;
  std::optional<record::Decoded> best_record;

  bool done() const { return max_records != 0 && consumed >= max_records; }
};

size_t Drainer::Run(size_t max_records, const std::vector<uint64_t>* targets,
                    std::optional<uint32_t> through_step, bool targets_final) {
  Pass pass{max_records, targets, through_step, targets_final};
  CheckFault();
  while (!state_.broken && !state_.boundary) {
    const size_t consumed_before = pass.consumed;
    pass.waits = false;
    pass.best.reset();
    pass.best_record.reset();
    for (uint32_t i = 0; i < state_.rings.size(); ++i) {
      if (!Scan(i, pass)) return pass.consumed;
    }
    if (!pass.best) {
      // Another ring may have read the tensor a ProducerStats (or Bytes)
      // waits for.
      if (pass.waits && pass.consumed > consumed_before) continue;
      break;
    }
    if (OverBound(pass.best_step, pass.through_step)) break;
    if (!ApplyOrdered(*pass.best, *pass.best_record)) break;
    RingState& ring = state_.rings[*pass.best];
    ring.reader.Release();
    ++ring.records_read;
    ++pass.consumed;
    if (pass.done()) break;
  }
  return pass.consumed;
}

bool Drainer::Scan(uint32_t i, Pass& pass) {
  RingState& ring = state_.rings[i];
  for (;;) {
    if (pass.targets != nullptr && i < pass.targets->size() &&
        ring.reader.position() >= (*pass.targets)[i]) {
      return true;
    }
    auto peeked = ring.reader.Peek();
    if (!peeked.ok()) {
      Corrupt(i, peeked.status().message());
      return false;
    }
    if (!peeked.value()) return true;
    const shm::RecordView view = *peeked.value();
    auto decoded = record::Decode(view.type, view.payload);
    if (!decoded.ok()) {
      Corrupt(i, decoded.status().message());
      return false;
    }
    if (!state_.tensors.TargetRead(decoded.value())) {
      pass.waits = true;
      return true;
    }
    if (const auto* b = std::get_if<record::BoundaryView>(&decoded.value())) {
      uint32_t step = 0;
      if (OnBoundary(i, *b, pass.targets, pass.targets_final, &step)) {
        return false;  // ready (state_.boundary), or corrupt
      }
      // The records of the step it closes are read whatever the bound.
      pass.through_step = std::max(pass.through_step.value_or(0), step);
      pass.waits = true;
      return true;
    }
    if (auto order = OrderOf(decoded.value())) {
      if (!pass.best || order->seq < pass.best_seq) {
        pass.best = i;
        pass.best_seq = order->seq;
        pass.best_step = order->step;
        pass.best_record = std::move(decoded).value();
      }
      return true;
    }
    ApplyLocal(i, decoded.value());
    if (state_.broken) return false;  // a bound was exceeded
    ring.reader.Release();
    ++ring.records_read;
    ++pass.consumed;
    if (pass.done()) return false;
  }
}

size_t DrainSome(const Rank& rank, RankState& state, size_t max_records,
                 spdlog::logger& log) {
  if (state.closed) return 0;
  Drainer drainer(rank, state, log);
  const size_t n = drainer.Run(max_records, nullptr);
  drainer.CheckCounters();
  return n;
}

size_t DrainTo(const Rank& rank, RankState& state,
               const std::vector<uint64_t>& targets, spdlog::logger& log,
               std::optional<uint32_t> through_step, bool targets_final) {
  if (state.closed) return 0;
  Drainer drainer(rank, state, log);
  const size_t n = drainer.Run(0, &targets, through_step, targets_final);
  drainer.CheckCounters();
  return n;
}

std::vector<uint64_t> CommittedHeads(const Rank& rank) {
  std::vector<uint64_t> heads;
  for (uint32_t i = 0; i < rank.segment().ring_count(); ++i) {
    heads.push_back(
        rank.segment().ring_header(i)->head.load(std::memory_order_acquire));
  }
  return heads;
}

void DrainCommitted(const Rank& rank, RankState& state, spdlog::logger& log) {
  // Every step is the command's: the bound holds nothing back.
  DrainTo(rank, state, CommittedHeads(rank), log, UINT32_MAX,
          /*targets_final=*/true);
}

void ReleaseBoundary(RankState& state) {
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
