#include <string_view>

#include "daemon/ingest/drainer.h"

namespace tprobe::daemon {

namespace {

// More drops than this between two checks (milliseconds apart) is not a
// count a producer wrote.
constexpr uint64_t kMaxDropJump = uint64_t{1} << 40;

}  // namespace

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
    const uint64_t written_max = state_.rings[i].reader.position() +
                                 producer_.segment().ring_data(i).size();
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

}  // namespace tprobe::daemon
