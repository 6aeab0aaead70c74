#include "daemon/ingest/drainer.h"
#include "daemon/output/tensor_store.h"

namespace tprobe::daemon {

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
    options.framework = state_.assembler.options().framework;
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

}  // namespace tprobe::daemon
