#include "common/dump/tree.h"

#include "common/dump/json_reindent.h"
#include "common/dump/json_stream_writer.h"

namespace tprobe::dump {
namespace {

// A "dropped" object: one key per reason of the count's list, in order.
template <typename Losses>
Json LossesJson(const Losses& losses) {
  Json doc = Json::object();
  losses.ForEach([&](const char* name, uint64_t n) { doc[name] = n; });
  return doc;
}

}  // namespace

StepTree::StepTree(std::string task, std::string level, std::string framework,
                   StackStyle stack_style)
    : task_(std::move(task)),
      level_(std::move(level)),
      framework_(std::move(framework)),
      stack_style_(stack_style) {}

AddResult StepTree::AddEntry(const std::string& name, const EntryText& body) {
  auto [slot, inserted] = entry_index_.try_emplace(name, entries_.size());
  // An empty parameters_grad entry holds the place of gradients that come
  // later (client Session::ReserveParamGrad); msprobe writes none.
  const bool placeholder = body.empty() && IsParamGradEntry(name);
  if (inserted) {
    entries_.push_back(Entry{name, body, placeholder});
    held_bytes_ += name.size() + body.held_bytes();
    if (!placeholder) ++accounting_.entries;
    return AddResult::kNew;
  }
  Entry& entry = entries_[slot->second];
  EntryText& existing = entry.text;
  if (placeholder) return AddResult::kMerged;  // it has its place already
  if (existing == body) {
    ++accounting_.duplicates_dropped;
    return AddResult::kDuplicate;
  }
  const bool filled = entry.held_place && existing.empty();
  held_bytes_ -= existing.held_bytes();
  for (size_t i = 0; i < body.size(); ++i) {
    existing.Set(body.key(i), body.value(i));
  }
  held_bytes_ += existing.held_bytes();
  if (filled) {
    ++accounting_.entries;  // in the place held for it
  } else if (!entry.held_place &&
             (name.starts_with("Module.") || name.starts_with("Cell."))) {
    // msprobe 26.x moves an updated module entry to the end (its outputs
    // come after its children's entries). Linear in the entries after it.
    const size_t from = slot->second;
    Entry moved = std::move(entries_[from]);
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(from));
    for (size_t i = from; i < entries_.size(); ++i) {
      entry_index_[entries_[i].name] = i;
    }
    slot->second = entries_.size();
    entries_.push_back(std::move(moved));
  }
  return AddResult::kMerged;
}

void StepTree::SetParent(const std::string& node,
                         std::optional<std::string> parent) {
  held_bytes_ += parent ? parent->size() : 0;
  Json value = parent ? Json(std::move(*parent)) : Json(nullptr);
  auto& nodes = construct_.get_ref<Json::object_t&>();
  auto [slot, inserted] = construct_index_.try_emplace(node, nodes.size());
  if (inserted) {
    held_bytes_ += node.size();
    nodes.emplace_back(node, std::move(value));
  } else {
    (nodes.begin() + slot->second)->second = std::move(value);
  }
}

void StepTree::AddStack(const std::string& name,
                        const std::vector<std::string>& lines) {
  if (!stack_names_.insert(name).second) return;  // listed once
  held_bytes_ += 2 * name.size();  // the name's group and its set member
  if (stack_style_ == StackStyle::kPerEntry) {
    for (const auto& line : lines) held_bytes_ += line.size();
    stacks_.push_back(StackGroup{{name}, lines});
    return;
  }
  // The key is built in a buffer kept from call to call: a known stack
  // (most calls) costs no allocation.
  stack_key_.clear();
  for (const auto& line : lines) {
    stack_key_ += line;
    stack_key_.push_back('\0');
  }
  auto it = stack_index_.find(stack_key_);
  if (it == stack_index_.end()) {
    held_bytes_ += 2 * stack_key_.size();  // the lines and their index key
    it = stack_index_.emplace(stack_key_, stacks_.size()).first;
    stacks_.push_back(StackGroup{{}, lines});
  }
  stacks_[it->second].names.push_back(name);
}

std::string StepTree::DumpJson() const {
  std::string out = "{\n \"task\": ";
  AppendPythonString(out, task_);
  out += ",\n \"level\": ";
  AppendPythonString(out, level_);
  out += ",\n \"framework\": ";
  AppendPythonString(out, framework_);
  out += ",\n \"dump_data_dir\": ";
  if (dump_data_dir_) {
    AppendPythonString(out, *dump_data_dir_);
  } else {
    out += "null";
  }
  out += ",\n \"data\": {";
  bool first = true;
  for (const Entry& entry : entries_) {
    const EntryText& text = entry.text;
    if (entry.held_place && text.empty()) continue;  // no gradient came
    out += first ? "\n  " : ",\n  ";
    first = false;
    AppendPythonString(out, entry.name);
    out += ": ";
    if (!debug_level()) {
      text.AppendTo(out);
    } else if (text.empty() ||
               !ReindentPythonJson(text.value(text.size() - 1),
                                   kEntryMemberDepth - 1, out)) {
      out += "null";
    }
  }
  out += first ? "}\n}" : "\n }\n}";
  return out;
}

std::string StepTree::StackJson() const {
  std::string out;
  JsonStreamWriter writer;
  writer.Reset(&out, 0);
  writer.BeginDict();
  auto lines = [&writer](const std::vector<std::string>& list) {
    writer.BeginList();
    for (const std::string& item : list) writer.String(item);
    writer.End();
  };
  if (stack_style_ == StackStyle::kPerEntry) {
    for (const StackGroup& entry : stacks_) {
      writer.Key(entry.names.front());
      lines(entry.lines);
    }
  } else {
    for (size_t i = 0; i < stacks_.size(); ++i) {
      writer.Key(std::to_string(i));
      writer.BeginList();
      lines(stacks_[i].names);
      lines(stacks_[i].lines);
      writer.End();
    }
  }
  writer.End();
  return out;
}

std::string StepTree::ConstructJson() const {
  if (level_ == "L1") return "{}";  // msprobe writes none for L1
  return PythonJsonDumps(construct_);
}

Json StepTree::AccountingDocument() const {
  const Accounting& a = accounting_;
  Json doc = Json::object();
  doc["complete"] = a.complete();
  doc["entries"] = a.entries;
  if (a.entries == 0 && !a.why_empty.empty()) doc["why_empty"] = a.why_empty;
  doc["duplicates_dropped"] = a.duplicates_dropped;
  doc["tensors_incomplete"] = a.tensors_incomplete;
  doc["records_skipped"] = a.records_skipped;
  doc["calls_unclosed"] = a.calls_unclosed;
  doc["dropped"] = LossesJson(a.dropped);
  doc["stream_corrupt"] = a.stream_corrupt;
  doc["producer_died"] = a.producer_died;
  if (a.write_failures > 0 || a.tensor_files_lost > 0) {
    doc["write_failures"] = a.write_failures;
    doc["tensor_files_lost"] = a.tensor_files_lost;
    doc["last_write_error"] = a.last_write_error;
  }
  doc["step_open"] = a.step_open;
  doc["recovered"] = a.recovered;
  if (a.records) {
    const RecordLedger& r = *a.records;
    doc["records"] =
        Json::object({{"counted_by", r.from_client ? "rank" : "daemon"},
                      {"produced", r.produced},
                      {"written", r.written},
                      {"dropped", LossesJson(r.dropped)}});
    doc["records"]["dropped"]["skipped"] = r.skipped;
    doc["records"]["dropped"]["unread"] = r.unread;
    if (r.first_step) doc["records"]["since_step"] = *r.first_step;
  }
  if (a.entries_lost > 0 || !a.incomplete_entries.empty() ||
      !a.incomplete_tensors.empty()) {
    doc["entries_lost"] = a.entries_lost;
    doc["incomplete_entries"] = a.incomplete_entries;
    doc["incomplete_tensors"] = a.incomplete_tensors;
  }
  if (a.outage) {
    const Outage& o = *a.outage;
    doc["daemon_outage"] =
        Json::object({{"steps", Json::array({o.first_step, o.last_step})},
                      {"produced", o.produced},
                      {"dropped", LossesJson(o.dropped)},
                      {"read_by_lost_daemon", o.read_by_lost_daemon}});
  }
  return doc;
}

}  // namespace tprobe::dump
