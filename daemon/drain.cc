#include "daemon/drain.h"

#include <algorithm>
#include <map>
#include <optional>
#include <variant>

#include "common/record/codec.h"
#include "common/stats/crc32.h"
#include "common/stats/tensor_stats.h"
#include "common/stats/xor_checksum.h"
#include "daemon/tensor_store.h"

namespace tprobe::daemon {
namespace {

// Tensor bytes are reserved up front only up to this much; a larger (or
// lying) nbytes grows the buffer as chunks really arrive.
constexpr size_t kMaxReserve = size_t{64} << 20;

// More drops than this between two checks (milliseconds apart) is not a
// count a producer wrote.
constexpr uint64_t kMaxDropJump = uint64_t{1} << 40;

class Drainer {
 public:
  Drainer(const Producer& producer, ProducerState& state, spdlog::logger& log)
      : producer_(producer), state_(state), log_(log) {}

  // See DrainSome; `targets`, when set, holds one ring position per ring
  // beyond which nothing is consumed. The open-step bound applies to
  // records of steps after `through_step` (none: to all).
  size_t Run(size_t max_records, const std::vector<uint64_t>* targets,
             std::optional<uint32_t> through_step = std::nullopt);

  // Checks the ring headers' counters (they may only grow) and charges the
  // new drops to the assembler; a counter that went back is corruption.
  void CheckCounters();

  // Puts the ring's held module nodes of steps up to `up_to_step` into
  // their trees, in order; later steps' nodes stay held.
  void ReleaseHeld(RingState& ring, uint32_t up_to_step = UINT32_MAX);

 private:
  // Applies an Intern, Tensor or Chunk record, which only concern their
  // ring. Returns false for anything else.
  bool ApplyLocal(RingState& ring, record::Decoded& decoded);
  // Applies an Entry or Call record. Returns false on corruption.
  bool ApplyOrdered(uint32_t ring_index, const record::Decoded& decoded);
  // Whether an Entry or Call record of `step` must wait: it would open a
  // tree beyond the open-step bound.
  bool OverBound(uint32_t step, std::optional<uint32_t> through_step) const;

  void OnIntern(const record::InternView& v);
  void OnTensor(RingState& ring, record::TensorView& v);
  void OnChunk(RingState& ring, const record::ChunkView& v);
  void OnCall(RingState& ring, const record::CallView& v);
  bool OnEntry(uint32_t ring_index, const record::EntryView& v);
  void CloseTensor(RingState& ring, bool complete);
  // Forgets the waiting tensors `refs` names (those it names twice or not
  // at all are skipped); all of them when `refs` is null.
  void Forget(RingState& ring, const std::vector<uint32_t>* refs);
  // Task overflow_check: counts a kept overflow entry, and notes (and
  // logs) when overflow_nums is reached.
  void CountOverflow(const std::string& name);
  void AddStack(dump::StepTree& tree, uint32_t step, const std::string& name,
                uint32_t stack_id);
  void WriteTensorFiles(uint32_t step, const RingState& ring,
                        const std::vector<TensorFile>& files);

  const std::string* Name(uint32_t id, uint32_t step, const char* what);
  dump::StepTree* Tree(uint32_t step, const std::string& name);
  void Skipped(uint32_t step, const std::string& why);
  void Corrupt(uint32_t ring_index, const std::string& what);
  // Marks the stream corrupt once the segment faulted (Segment::faulted):
  // what was read from it since may be zeros.
  void CheckFault();

  const Producer& producer_;
  ProducerState& state_;
  spdlog::logger& log_;
};

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
                    std::optional<uint32_t> through_step) {
  size_t consumed = 0;
  auto done = [&] { return max_records != 0 && consumed >= max_records; };
  CheckFault();
  while (!state_.broken) {
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
    if (!best) break;
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
  return OnEntry(ring_index, std::get<record::EntryView>(decoded));
}

void Drainer::OnIntern(const record::InternView& v) {
  const ProducerLimits& limits = producer_.limits();
  const bool name = v.kind == record::InternKind::kName;
  const bool known =
      name ? state_.names.contains(v.id) : state_.stacks.contains(v.id);
  if ((!known &&
       state_.names.size() + state_.stacks.size() >= limits.max_interned) ||
      state_.interned_bytes + v.text.size() > limits.max_interned_bytes) {
    Corrupt(0, "more interned names and stacks than the limit of " +
                   std::to_string(limits.max_interned) + " (or " +
                   std::to_string(limits.max_interned_bytes) + " bytes)");
    return;
  }
  // A repeated id replaces the text; the byte total only grows, so a
  // stream of repeats still meets the bound.
  state_.interned_bytes += v.text.size();
  if (name) {
    state_.names[v.id] = std::string(v.text);
    return;
  }
  // Lines separated by '\0'; a trailing separator ends the last line.
  std::vector<std::string> lines;
  std::string_view text = v.text;
  while (!text.empty()) {
    const size_t end = text.find('\0');
    lines.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  state_.stacks[v.id] = std::move(lines);
}

void Drainer::OnTensor(RingState& ring, record::TensorView& v) {
  PendingTensor pending;
  pending.meta = v.tensor;
  pending.record = ring.records_read;
  pending.info.dtype = v.dtype;
  pending.info.shape = std::move(v.shape);
  pending.info.requires_grad = v.tensor.requires_grad != 0;
  if (v.tensor.nbytes > producer_.limits().max_tensor_bytes) {
    // Never buffered: its chunks are skipped and it stays incomplete.
    pending.broken = true;
  } else {
    pending.bytes.reserve(std::min<uint64_t>(v.tensor.nbytes, kMaxReserve));
  }
  ring.pending = std::move(pending);
  if (v.tensor.nbytes == 0) CloseTensor(ring, /*complete=*/true);
}

void Drainer::OnChunk(RingState& ring, const record::ChunkView& v) {
  if (!ring.pending || ring.pending->meta.ref != v.chunk.ref) {
    log_.debug("producer {}: chunk of tensor {} without its tensor record",
               producer_.client_id(), v.chunk.ref);
    return;
  }
  PendingTensor& p = *ring.pending;
  if (p.broken) return;
  const uint64_t received = p.bytes.size();
  if (v.chunk.offset != received || v.bytes.size() > p.meta.nbytes - received) {
    p.broken = true;  // a chunk went missing: the tensor cannot complete
    return;
  }
  p.bytes.insert(p.bytes.end(), v.bytes.begin(), v.bytes.end());
  if (p.bytes.size() == p.meta.nbytes) CloseTensor(ring, /*complete=*/true);
}

void Drainer::CloseTensor(RingState& ring, bool complete) {
  PendingTensor& p = *ring.pending;
  TensorInfo info = std::move(p.info);
  info.complete = complete;
  if (complete) {
    info.stats =
        stats::ComputeStats(info.dtype, info.shape, p.bytes,
                            state_.assembler.options().framework == "mindspore"
                                ? stats::StatRules::kMindSpore
                                : stats::StatRules::kPyTorch);
    const bool md5 = state_.config.summary_mode == config::SummaryMode::kMd5;
    const bool keep = state_.assembler.options().tensor_data;
    if (md5 || keep) info.crc = stats::Crc32(p.bytes);
    if (md5) info.md5 = stats::Crc32Hex(info.crc);
    if (state_.config.summary_mode == config::SummaryMode::kXor) {
      info.xor_sum = stats::XorChecksum(info.dtype, info.shape, p.bytes);
    }
    if (keep) info.bytes = std::move(p.bytes);
  }
  // A ref sent again replaces the tensor that waited under it.
  auto [it, added] = ring.tensors.try_emplace(p.meta.ref);
  if (!added) ring.waiting_bytes -= it->second.info.bytes.size();
  ring.waiting_bytes += info.bytes.size();
  it->second = WaitingTensor{p.record, std::move(info)};
  ring.pending.reset();
  if (ring.waiting_bytes > producer_.limits().max_waiting_bytes) {
    Corrupt(static_cast<uint32_t>(&ring - state_.rings.data()),
            "tensors waiting for their entry hold more than " +
                std::to_string(producer_.limits().max_waiting_bytes) +
                " bytes");
  }
}

const std::string* Drainer::Name(uint32_t id, uint32_t step, const char* what) {
  auto it = state_.names.find(id);
  if (it != state_.names.end()) return &it->second;
  Skipped(step, std::string(what) + " names id " + std::to_string(id) +
                    ", which was never interned");
  return nullptr;
}

dump::StepTree* Drainer::Tree(uint32_t step, const std::string& name) {
  dump::StepTree* tree = state_.assembler.Tree(step);
  if (tree == nullptr) {
    Skipped(step, name + " arrived after step " + std::to_string(step) +
                      " was finished");
    return nullptr;
  }
  if (step > state_.assembler.current_step()) state_.assembler.NoteStep(step);
  return tree;
}

void Drainer::OnCall(RingState& ring, const record::CallView& v) {
  if (state_.overflow_limit_reached) return;  // the dump service ended
  const std::string* name = Name(v.call.name_id, v.call.step, "a call record");
  if (name == nullptr) return;
  const bool module =
      v.call.call_kind == static_cast<uint8_t>(record::CallKind::kModule);
  const bool group =
      v.call.call_kind == static_cast<uint8_t>(record::CallKind::kGroup);
  auto& open = ring.open_modules;
  const uint32_t step = v.call.step;
  auto same_step = [step](const RingState::OpenModule& m) {
    return m.step == step;
  };
  if (!v.begin) {
    ReleaseHeld(ring);
    auto it = std::find_if(open.rbegin(), open.rend(),
                           [&](const RingState::OpenModule& m) {
                             return m.step == step && m.name == *name;
                           });
    if (it != open.rend()) {
      // It and the calls of its step still open inside it are closed.
      open.erase(std::remove_if(std::prev(it.base()), open.end(), same_step),
                 open.end());
    }
    return;
  }
  if (state_.config.level != config::Level::kL1) {
    // A call's parent is of its own step: a call left open in an earlier
    // step is never the parent of a later one.
    std::optional<std::string> parent;
    auto it = std::find_if(open.rbegin(), open.rend(), same_step);
    if (it != open.rend() && !group) parent = it->name;
    if (module) {
      ring.held_nodes.push_back(
          HeldNode{v.call.step, *name, std::move(parent)});
    } else {
      if (dump::StepTree* tree = Tree(v.call.step, *name)) {
        state_.assembler.JournalOf(v.call.step)->Parent(*name, parent);
        tree->SetParent(*name, std::move(parent));
      }
      if (!group) ReleaseHeld(ring);
    }
  }
  if (module || group) open.push_back(RingState::OpenModule{step, *name});
}

void Drainer::ReleaseHeld(RingState& ring, uint32_t up_to_step) {
  auto held = ring.held_nodes.begin();
  for (; held != ring.held_nodes.end() && held->step <= up_to_step; ++held) {
    if (dump::StepTree* tree = Tree(held->step, held->name)) {
      state_.assembler.JournalOf(held->step)->Parent(held->name, held->parent);
      tree->SetParent(held->name, std::move(held->parent));
    }
  }
  ring.held_nodes.erase(ring.held_nodes.begin(), held);
}

bool Drainer::OnEntry(uint32_t ring_index, const record::EntryView& v) {
  RingState& ring = state_.rings[ring_index];
  if (state_.overflow_limit_reached) {
    // Task overflow_check ended the dump service (as msprobe does): later
    // calls reach neither dump.json nor stack.json nor construct.json, and
    // no tensor is needed any more.
    Forget(ring, nullptr);
    return true;
  }
  const std::string* name = Name(v.entry.name_id, v.entry.step, "an entry");
  dump::StepTree* tree = name ? Tree(v.entry.step, *name) : nullptr;
  if (tree != nullptr) {
    RenderOptions options;
    options.data_name = state_.assembler.options().tensor_data;
    options.md5 = state_.config.summary_mode == config::SummaryMode::kMd5;
    options.xor_sum = state_.config.summary_mode == config::SummaryMode::kXor;
    options.mindspore = state_.assembler.options().framework == "mindspore";
    // The tensors the entry refers to: it uses each once.
    std::vector<uint32_t> referenced;
    auto lookup = [&ring, &referenced](uint32_t ref) -> const TensorInfo* {
      referenced.push_back(ref);
      auto it = ring.tensors.find(ref);
      return it == ring.tensors.end() ? nullptr : &it->second.info;
    };
    if (v.body.empty()) {
      // A call whose stack is listed while data_mode keeps none of its data.
      AddStack(*tree, v.entry.step, *name, v.entry.stack_id);
      return true;
    }
    RenderedEntry& rendered = state_.rendered;
    if (Status s =
            state_.renderer.Render(*name, v.body, lookup, options, &rendered);
        !s.ok()) {
      Corrupt(ring_index, s.message());
      return false;
    }
    // A lost chunk counts even in an entry that is not kept: it might
    // have held the overflow.
    dump::Accounting& accounting = tree->accounting();
    accounting.tensors_incomplete += rendered.tensors_incomplete;
    if (rendered.tensors_incomplete > 0) accounting.NoteIncompleteEntry(*name);
    for (const std::string& t : rendered.incomplete_tensors) {
      accounting.NoteIncompleteTensor(t);
    }
    const bool overflow_check =
        state_.config.task == config::Task::kOverflowCheck;
    // Task structure writes no entry: dump.json's data stays {}.
    const bool structure = state_.config.task == config::Task::kStructure;
    if (!structure && (!overflow_check ||
                       (rendered.overflow && !state_.overflow_limit_reached))) {
      state_.assembler.JournalOf(v.entry.step)->Entry(*name, rendered.text);
      const dump::AddResult added = tree->AddEntry(*name, rendered.text);
      if (added != dump::AddResult::kDuplicate) {
        WriteTensorFiles(v.entry.step, ring, rendered.files);
      }
      if (overflow_check && added == dump::AddResult::kNew) {
        CountOverflow(*name);
      }
    }
    // stack.json covers every call, kept or not (msprobe collects it
    // separately); StepTree lists a name once.
    AddStack(*tree, v.entry.step, *name, v.entry.stack_id);
    Forget(ring, &referenced);
  }
  // A skipped entry's tensors are released with their step.
  return true;
}

void Drainer::Forget(RingState& ring, const std::vector<uint32_t>* refs) {
  if (refs == nullptr) {
    ring.tensors.clear();
    ring.waiting_bytes = 0;
    return;
  }
  for (uint32_t ref : *refs) {
    auto it = ring.tensors.find(ref);
    if (it == ring.tensors.end()) continue;
    ring.waiting_bytes -= it->second.info.bytes.size();
    ring.tensors.erase(it);
  }
}

void Drainer::CountOverflow(const std::string& name) {
  const int64_t limit = state_.config.overflow_nums;
  ++state_.overflows_dumped;
  log_.warn("producer {} (pid {}, rank {}): overflow (inf or nan) in {}",
            producer_.client_id(), producer_.pid(), producer_.rank(), name);
  if (limit >= 0 && state_.overflows_dumped >= static_cast<uint64_t>(limit)) {
    state_.overflow_limit_reached = true;
    log_.warn(
        "producer {} (pid {}, rank {}): overflow_nums {} reached; the dump "
        "ends here, as msprobe's does: no later call and no later step is "
        "written",
        producer_.client_id(), producer_.pid(), producer_.rank(), limit);
  }
}

void Drainer::AddStack(dump::StepTree& tree, uint32_t step,
                       const std::string& name, uint32_t stack_id) {
  if (stack_id == 0) return;
  auto stack = state_.stacks.find(stack_id);
  if (stack == state_.stacks.end()) {
    Skipped(step, "the stack of " + name + " (id " + std::to_string(stack_id) +
                      ") was never interned");
    return;
  }
  state_.assembler.JournalOf(step)->Stack(name, stack->second);
  tree.AddStack(name, stack->second);
}

void Drainer::WriteTensorFiles(uint32_t step, const RingState& ring,
                               const std::vector<TensorFile>& files) {
  TensorStore* store = state_.assembler.Tensors(step);
  Status s;
  size_t written = 0;
  for (; store != nullptr && s.ok() && written < files.size(); ++written) {
    const TensorInfo& t = ring.tensors.at(files[written].ref).info;
    s = store->Put(files[written].file_name, t.dtype, t.shape, t.bytes, t.crc);
  }
  if (!s.ok()) {
    // The failed file and the ones after it: their bytes are gone.
    if (dump::StepTree* tree = state_.assembler.Tree(step)) {
      tree->accounting().tensor_files_lost += files.size() - written + 1;
      tree->accounting().last_write_error = s.message();
    }
    state_.last_error = s.message();
    log_.error("producer {} (pid {}, rank {}): {}", producer_.client_id(),
               producer_.pid(), producer_.rank(), s.message());
  }
}

void Drainer::Skipped(uint32_t step, const std::string& why) {
  state_.assembler.AddSkipped(step);
  // Logged at warn the 1st, 2nd, 4th, 8th… time, so a flood stays readable.
  const uint64_t n = ++state_.skipped_records;
  state_.last_error = "skipped a record: " + why;
  const auto level =
      (n & (n - 1)) == 0 ? spdlog::level::warn : spdlog::level::debug;
  log_.log(level,
           "producer {} (pid {}, rank {}): skipped a record ({} so far): {}",
           producer_.client_id(), producer_.pid(), producer_.rank(), n, why);
}

void Drainer::Corrupt(uint32_t ring_index, const std::string& what) {
  state_.broken = true;
  state_.assembler.MarkStreamCorrupt();
  state_.last_error =
      "corrupt record on ring " + std::to_string(ring_index) + ": " + what;
  log_.error(
      "producer {} (pid {}, rank {}): {}; its rings are no longer read, "
      "other producers are not affected",
      producer_.client_id(), producer_.pid(), producer_.rank(),
      state_.last_error);
}

void Drainer::CheckFault() {
  if (state_.broken || !producer_.segment().faulted()) return;
  Corrupt(0,
          "a bus error on reading the shared memory segment: it reads zeros "
          "now and is no longer trusted");
}

void Drainer::CheckCounters() {
  CheckFault();
  if (state_.broken) return;
  constexpr auto kFull = static_cast<size_t>(shm::DropReason::kRingFull);
  constexpr auto kLarge = static_cast<size_t>(shm::DropReason::kTooLarge);
  uint64_t added[static_cast<size_t>(shm::DropReason::kCount)] = {};
  for (uint32_t i = 0; i < state_.rings.size(); ++i) {
    const shm::RingHeader* h = producer_.segment().ring_header(i);
    SeenCounters now;
    now.records = h->records_written.load(std::memory_order_relaxed);
    now.bytes = h->bytes_written.load(std::memory_order_relaxed);
    for (size_t r = 0; r < std::size(now.dropped); ++r) {
      now.dropped[r] = h->dropped[r].load(std::memory_order_relaxed);
    }
    SeenCounters& seen = state_.rings[i].seen;
    // Counters only grow, and the producer cannot have written more than
    // fits in front of what the daemon consumed: bytes_written equals head,
    // and every record takes at least 8 bytes. A single check never sees
    // more than kMaxDropJump new drops.
    const uint64_t written_max =
        state_.rings[i].reader.position() + producer_.segment().ring_bytes();
    bool plausible = now.records >= seen.records && now.bytes >= seen.bytes &&
                     now.bytes <= written_max &&
                     now.records <= written_max / shm::kRecordAlign;
    for (size_t r = 0; r < std::size(now.dropped); ++r) {
      plausible = plausible && now.dropped[r] >= seen.dropped[r] &&
                  now.dropped[r] - seen.dropped[r] <= kMaxDropJump;
    }
    if (!plausible) {
      Corrupt(i, "implausible ring counters (records, bytes or drops)");
      return;
    }
    for (size_t r = 0; r < std::size(now.dropped); ++r) {
      const uint64_t delta = now.dropped[r] - seen.dropped[r];
      added[r] = delta > UINT64_MAX - added[r] ? UINT64_MAX : added[r] + delta;
    }
    seen = now;
  }
  state_.assembler.AddRingDrops(added[kFull], added[kLarge]);
}

}  // namespace

size_t DrainSome(const Producer& producer, ProducerState& state,
                 size_t max_records, spdlog::logger& log) {
  if (state.closed) return 0;
  Drainer drainer(producer, state, log);
  const size_t n = drainer.Run(max_records, nullptr);
  drainer.CheckCounters();
  return n;
}

void DrainTo(const Producer& producer, ProducerState& state,
             const std::vector<uint64_t>& targets, spdlog::logger& log,
             std::optional<uint32_t> through_step) {
  if (state.closed) return;
  Drainer drainer(producer, state, log);
  drainer.Run(0, &targets, through_step);
  drainer.CheckCounters();
}

void DrainCommitted(const Producer& producer, ProducerState& state,
                    spdlog::logger& log) {
  std::vector<uint64_t> targets;
  for (uint32_t i = 0; i < state.rings.size(); ++i) {
    targets.push_back(producer.segment().ring_header(i)->head.load(
        std::memory_order_acquire));
  }
  // Every step is the command's: the bound holds nothing back.
  DrainTo(producer, state, targets, log, UINT32_MAX);
}

void CloseOpenCalls(ProducerState& state, uint32_t up_to_step) {
  std::map<uint32_t, uint64_t> unclosed;  // by step
  for (RingState& ring : state.rings) {
    auto& open = ring.open_modules;
    auto ended = [up_to_step](const RingState::OpenModule& m) {
      return m.step <= up_to_step;
    };
    for (const RingState::OpenModule& m : open) {
      if (ended(m)) ++unclosed[m.step];
    }
    open.erase(std::remove_if(open.begin(), open.end(), ended), open.end());
  }
  for (const auto& [step, count] : unclosed) {
    state.assembler.NoteUnclosedCalls(step, count);
  }
}

void ReleaseSettledTensors(const Producer& producer, ProducerState& state,
                           spdlog::logger& log) {
  uint64_t released = 0;
  for (RingState& ring : state.rings) {
    for (auto it = ring.tensors.begin(); it != ring.tensors.end();) {
      if (it->second.record >= ring.records_settled) {
        ++it;
        continue;
      }
      ring.waiting_bytes -= it->second.info.bytes.size();
      it = ring.tensors.erase(it);
      ++released;
    }
  }
  if (released > 0) {
    log.debug(
        "producer {} (pid {}, rank {}): released {} tensors no entry referred "
        "to",
        producer.client_id(), producer.pid(), producer.rank(), released);
  }
}

void ReleaseHeldNodes(const Producer& producer, ProducerState& state,
                      spdlog::logger& log, uint32_t up_to_step) {
  Drainer drainer(producer, state, log);
  for (RingState& ring : state.rings) drainer.ReleaseHeld(ring, up_to_step);
}

}  // namespace tprobe::daemon
