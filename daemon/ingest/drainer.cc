// The drain's dispatch of a rank's records to the parts of its state,
// its Entry records, and its skipped and corrupt records (drainer.h).

#include "daemon/ingest/drainer.h"

#include <string_view>

#include "daemon/ingest/drain.h"
#include "daemon/output/tensor_store.h"

namespace tprobe::daemon {
namespace {

using Outcome = TensorAssembler::Outcome;

// More drops than this between two checks (milliseconds apart) is not a
// count a rank wrote.
constexpr uint64_t kMaxDropJump = uint64_t{1} << 40;

}  // namespace

TensorRules Drainer::Rules() const {
  return TensorRules{rank_.limits(), state_.config.summary_mode,
                     state_.assembler.options().tensor_data,
                     state_.assembler.options().framework};
}

bool Drainer::Report(uint32_t ring, const Result<Outcome>& r) {
  if (!r.ok()) {
    Corrupt(ring, r.status().message());
    return false;
  }
  if (r.value() == Outcome::kCompleted) ReleaseHeldEntries(std::nullopt);
  return true;
}

void Drainer::ApplyLocal(uint32_t ring, record::Decoded& decoded) {
  const TensorRules rules = Rules();
  TensorAssembler& tensors = state_.tensors;
  if (auto* chunk = std::get_if<record::ChunkView>(&decoded)) {
    Result<Outcome> r = tensors.OnChunk(ring, *chunk, rules);
    if (r.ok() && r.value() == Outcome::kStrayChunk) {
      log_.debug("producer {}: chunk of tensor {} without its tensor record",
                 rank_.client_id(), chunk->chunk.ref);
    }
    Report(ring, r);
    return;
  }
  // Closing a tensor incomplete keeps no bytes, so it cannot fail; it may
  // complete one whose bytes came from this ring.
  Report(ring, tensors.ClosePending(ring, rules));
  const uint64_t record = state_.rings[ring].records_read;
  if (auto* intern = std::get_if<record::InternView>(&decoded)) {
    if (Status s = state_.interns.Add(*intern, rank_.limits()); !s.ok()) {
      Corrupt(0, s.message());
    }
  } else if (auto* stats = std::get_if<record::ProducerStatsView>(&decoded)) {
    Report(ring, tensors.OnProducerStats(*stats, rules));
  } else if (auto* bytes = std::get_if<record::ProducerBytesView>(&decoded)) {
    Report(ring, tensors.OnProducerBytes(ring, *bytes, record, rules));
  } else if (auto* tensor = std::get_if<record::TensorView>(&decoded)) {
    Report(ring, tensors.OnTensor(ring, *tensor, record, rules));
  }
}

bool Drainer::ApplyOrdered(uint32_t ring, const record::Decoded& decoded) {
  Report(ring, state_.tensors.ClosePending(ring, Rules()));
  if (const auto* call = std::get_if<record::CallView>(&decoded)) {
    OnCall(ring, *call);
    return true;
  }
  return HoldOrApply(ring, std::get<record::EntryView>(decoded));
}

void Drainer::PlaceNode(uint32_t step, const std::string& name,
                        std::optional<std::string> parent) {
  if (dump::StepTree* tree = Tree(step, name)) {
    if (dump::Journal* journal = state_.assembler.JournalOf(step)) {
      journal->Parent(name, parent);
    }
    tree->SetParent(name, std::move(parent));
  }
}

void Drainer::OnCall(uint32_t ring, const record::CallView& v) {
  if (state_.overflow_limit_reached) return;  // the dump service ended
  const std::string* name = Name(v.call.name_id, v.call.step, "a call record");
  if (name == nullptr) return;
  state_.nodes.OnCall(ring, v, *name, state_.config.level != config::Level::kL1,
                      [this](uint32_t step, const std::string& node,
                             std::optional<std::string> parent) {
                        PlaceNode(step, node, std::move(parent));
                      });
}

void Drainer::ReleaseHeldNodes(uint32_t up_to_step) {
  auto place = [this](uint32_t step, const std::string& node,
                      std::optional<std::string> parent) {
    PlaceNode(step, node, std::move(parent));
  };
  for (uint32_t ring = 0; ring < state_.nodes.rings(); ++ring) {
    state_.nodes.ReleaseHeld(ring, up_to_step, place);
  }
}

bool Drainer::HoldOrApply(uint32_t ring, const record::EntryView& v) {
  if (state_.tensors.awaiting() == 0 && state_.held.empty()) {
    return OnEntry(ring, v);
  }
  Result<std::vector<uint32_t>> refs = HeldEntries::Refs(v.body);
  if (!refs.ok()) {
    Corrupt(ring, refs.status().message());
    return false;
  }
  HeldEntry held;
  held.ring = ring;
  held.entry = v.entry;
  held.refs = std::move(refs).value();
  if (state_.held.empty() && Ready(held)) return OnEntry(ring, v);
  if (Status s = state_.held.Hold(std::move(held), v.body, rank_.limits());
      !s.ok()) {
    Corrupt(ring, s.message());
    return false;
  }
  return true;
}

bool Drainer::Ready(const HeldEntry& held) const {
  for (uint32_t ref : held.refs) {
    if (state_.tensors.Awaits(held.ring, ref)) return false;
  }
  return true;
}

void Drainer::ReleaseHeldEntries(std::optional<uint32_t> through_step) {
  while (!state_.held.empty() && !state_.broken) {
    const HeldEntry& front = state_.held.front();
    if (!Ready(front) && (!through_step || front.entry.step > *through_step)) {
      return;
    }
    // Its missing statistics (a settled step) render as an incomplete
    // tensor, which marks the step incomplete.
    HeldEntry held = state_.held.PopFront();
    OnEntry(held.ring, record::EntryView{held.entry, held.body});
  }
}

bool Drainer::OnEntry(uint32_t ring, const record::EntryView& v) {
  if (state_.overflow_limit_reached) {
    // Task overflow_check ended the dump service (as msprobe does): later
    // calls reach neither dump.json nor stack.json nor construct.json, and
    // no tensor is needed any more.
    state_.tensors.Forget(ring, nullptr);
    return true;
  }
  const uint32_t step = v.entry.step;
  const std::string* name = Name(v.entry.name_id, step, "an entry");
  dump::StepTree* tree = name ? Tree(step, *name) : nullptr;
  // A skipped entry's tensors are released with their step.
  if (tree == nullptr) return true;
  if (v.body.empty()) {
    if (dump::IsParamGradEntry(*name)) {
      // The place of gradients that come later (StepTree::AddEntry).
      state_.rendered.Clear();
      KeepEntry(*tree, step, ring, *name);
      return true;
    }
    // A call whose stack is listed while data_mode keeps none of its data.
    AddStack(*tree, step, *name, v.entry.stack_id);
    return true;
  }
  RenderOptions options;
  options.data_name = state_.assembler.options().tensor_data;
  options.md5 = state_.config.summary_mode == config::SummaryMode::kMd5;
  options.xor_sum = state_.config.summary_mode == config::SummaryMode::kXor;
  options.framework = state_.assembler.options().framework;
  // The tensors the entry refers to: it uses each once. The lambda holds
  // two words: std::function keeps it without an allocation.
  state_.referenced.clear();
  auto lookup = [this, ring](uint32_t ref) -> const TensorInfo* {
    state_.referenced.push_back(ref);
    return state_.tensors.Find(ring, ref);
  };
  if (Status s = state_.renderer.Render(*name, v.body, lookup, options,
                                        &state_.rendered);
      !s.ok()) {
    Corrupt(ring, s.message());
    return false;
  }
  KeepEntry(*tree, step, ring, *name);
  // stack.json covers every call, kept or not (msprobe collects it
  // separately); StepTree lists a name once.
  AddStack(*tree, step, *name, v.entry.stack_id);
  state_.tensors.Forget(ring, &state_.referenced);
  return true;
}

void Drainer::KeepEntry(dump::StepTree& tree, uint32_t step, uint32_t ring,
                        const std::string& name) {
  const RenderedEntry& rendered = state_.rendered;
  // A lost chunk counts even in an entry that is not kept: it might have
  // held the overflow.
  dump::Accounting& accounting = tree.accounting();
  accounting.tensors_incomplete += rendered.tensors_incomplete;
  if (rendered.tensors_incomplete > 0) accounting.NoteIncompleteEntry(name);
  for (const std::string& t : rendered.incomplete_tensors) {
    accounting.NoteIncompleteTensor(t);
  }
  const bool overflow_check =
      state_.config.task == config::Task::kOverflowCheck;
  // Task structure writes no entry: dump.json's data stays {}.
  if (state_.config.task == config::Task::kStructure ||
      (overflow_check &&
       (!rendered.overflow || state_.overflow_limit_reached))) {
    return;
  }
  if (dump::Journal* journal = state_.assembler.JournalOf(step)) {
    journal->Entry(name, rendered.text);
  }
  const dump::AddResult added = tree.AddEntry(name, rendered.text);
  if (added != dump::AddResult::kDuplicate) {
    WriteTensorFiles(step, ring, rendered.files);
  }
  if (overflow_check && added == dump::AddResult::kNew) CountOverflow(name);
}

void Drainer::CountOverflow(const std::string& name) {
  const int64_t limit = state_.config.overflow_nums;
  ++state_.overflows_dumped;
  log_.warn("producer {} (pid {}, rank {}): overflow (inf or nan) in {}",
            rank_.client_id(), rank_.pid(), rank_.rank(), name);
  if (limit >= 0 && state_.overflows_dumped >= static_cast<uint64_t>(limit)) {
    state_.overflow_limit_reached = true;
    log_.warn(
        "producer {} (pid {}, rank {}): overflow_nums {} reached; the dump "
        "ends here, as msprobe's does: no later call and no later step is "
        "written",
        rank_.client_id(), rank_.pid(), rank_.rank(), limit);
  }
}

void Drainer::AddStack(dump::StepTree& tree, uint32_t step,
                       const std::string& name, uint32_t stack_id) {
  if (stack_id == 0) return;
  const std::vector<std::string>* stack = state_.interns.Stack(stack_id);
  if (stack == nullptr) {
    Skipped(step, "the stack of " + name + " (id " + std::to_string(stack_id) +
                      ") was never interned");
    return;
  }
  if (dump::Journal* journal = state_.assembler.JournalOf(step)) {
    journal->Stack(name, *stack);
  }
  tree.AddStack(name, *stack);
}

void Drainer::WriteTensorFiles(uint32_t step, uint32_t ring,
                               const std::vector<TensorFile>& files) {
  TensorStore* store = state_.assembler.Tensors(step);
  Status s;
  size_t written = 0;
  for (; store != nullptr && s.ok() && written < files.size(); ++written) {
    // A file names a tensor the entry found.
    const TensorInfo& t = *state_.tensors.Find(ring, files[written].ref);
    s = store->Put(files[written].file_name, t.dtype, t.shape, t.bytes, t.crc);
  }
  if (!s.ok()) {
    // The failed file and the ones after it: their bytes are gone.
    if (dump::StepTree* tree = state_.assembler.Tree(step)) {
      tree->accounting().tensor_files_lost += files.size() - written + 1;
      tree->accounting().last_write_error = s.message();
    }
    state_.last_error = s.message();
    log_.error("producer {} (pid {}, rank {}): {}", rank_.client_id(),
               rank_.pid(), rank_.rank(), s.message());
  }
}

const std::string* Drainer::Name(uint32_t id, uint32_t step, const char* what) {
  if (const std::string* name = state_.interns.Name(id)) return name;
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

void Drainer::Skipped(uint32_t step, const std::string& why) {
  state_.assembler.AddSkipped(step);
  // Logged at warn the 1st, 2nd, 4th, 8th… time, so a flood stays readable.
  const uint64_t n = ++state_.skipped_records;
  state_.last_error = "skipped a record: " + why;
  const auto level =
      (n & (n - 1)) == 0 ? spdlog::level::warn : spdlog::level::debug;
  log_.log(level,
           "producer {} (pid {}, rank {}): skipped a record ({} so far): {}",
           rank_.client_id(), rank_.pid(), rank_.rank(), n, why);
}

void Drainer::Corrupt(uint32_t ring, const std::string& what) {
  state_.broken = true;
  state_.assembler.MarkStreamCorrupt();
  state_.last_error =
      "corrupt record on ring " + std::to_string(ring) + ": " + what;
  log_.error(
      "producer {} (pid {}, rank {}): {}; its rings are no longer read, "
      "other producers are not affected",
      rank_.client_id(), rank_.pid(), rank_.rank(), state_.last_error);
}

void Drainer::CheckFault() {
  if (state_.broken || !rank_.segment().faulted()) return;
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
    const shm::RingHeader* h = rank_.segment().ring_header(i);
    SeenCounters now;
    now.records = h->records_written.load(std::memory_order_relaxed);
    now.bytes = h->bytes_written.load(std::memory_order_relaxed);
    for (size_t r = 0; r < std::size(now.dropped); ++r) {
      now.dropped[r] = h->dropped[r].load(std::memory_order_relaxed);
    }
    SeenCounters& seen = state_.rings[i].seen;
    // Counters only grow, and the rank cannot have written more than
    // fits in front of what the daemon consumed: bytes_written equals head,
    // and every record takes at least 8 bytes. A single check never sees
    // more than kMaxDropJump new drops.
    const uint64_t written_max =
        state_.rings[i].reader.position() + rank_.segment().ring_data(i).size();
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
  state_.assembler.AddRingDrops(
      RingLosses{.ring_full = added[kFull], .too_large = added[kLarge]});
}

void ReleaseHeldNodes(const Rank& rank, RankState& state, spdlog::logger& log,
                      uint32_t up_to_step) {
  Drainer(rank, state, log).ReleaseHeldNodes(up_to_step);
}

void ReleaseHeldEntries(const Rank& rank, RankState& state, spdlog::logger& log,
                        uint32_t through_step) {
  Drainer(rank, state, log).ReleaseHeldEntries(through_step);
}

void CloseOpenCalls(RankState& state, uint32_t up_to_step) {
  for (const auto& [step, count] : state.nodes.CloseOpen(up_to_step)) {
    state.assembler.NoteUnclosedCalls(step, count);
  }
}

void ReleaseSettledTensors(const Rank& rank, RankState& state,
                           spdlog::logger& log) {
  uint64_t released = 0;
  for (uint32_t i = 0; i < state.rings.size(); ++i) {
    released += state.tensors.ForgetBefore(i, state.rings[i].records_settled);
  }
  if (released > 0) {
    log.debug(
        "producer {} (pid {}, rank {}): released {} tensors no entry referred "
        "to",
        rank.client_id(), rank.pid(), rank.rank(), released);
  }
}

}  // namespace tprobe::daemon
