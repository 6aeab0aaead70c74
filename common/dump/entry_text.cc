#include "common/dump/entry_text.h"

#include <cassert>

namespace tprobe::dump {

EntryText EntryText::FromJson(const Json& body) {
  EntryText entry;
  if (!body.is_object()) return entry;
  for (const auto& [key, value] : body.items()) {
    AppendPythonJson(*entry.BeginMember(key), value, kEntryMemberDepth);
    entry.EndMember();
  }
  return entry;
}

std::string* EntryText::BeginMember(std::string_view key) {
  const size_t key_begin = bytes_.size();
  bytes_.append(key);
  members_.push_back(Member{key_begin, key.size(), bytes_.size(), 0});
  return &bytes_;
}

void EntryText::EndMember() {
  assert(!members_.empty());
  Member& added = members_.back();
  added.value_size = bytes_.size() - added.value_begin;
  const std::string_view added_key = View(added.key_begin, added.key_size);
  for (size_t i = 0; i + 1 < members_.size(); ++i) {
    if (key(i) == added_key) {
      members_[i].value_begin = added.value_begin;
      members_[i].value_size = added.value_size;
      members_.pop_back();
      return;
    }
  }
}

void EntryText::Set(std::string_view key, std::string_view value) {
  BeginMember(key)->append(value);
  EndMember();
}

void EntryText::Clear() {
  bytes_.clear();
  members_.clear();
}

void EntryText::AppendTo(std::string& out) const {
  if (members_.empty()) {
    out += "{}";
    return;
  }
  out += '{';
  for (size_t i = 0; i < members_.size(); ++i) {
    if (i > 0) out += ',';
    out += '\n';
    out.append(kEntryMemberDepth, ' ');
    AppendPythonString(out, key(i));
    out += ": ";
    out += value(i);
  }
  out += '\n';
  out.append(kEntryMemberDepth - 1, ' ');
  out += '}';
}

bool operator==(const EntryText& a, const EntryText& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.key(i) != b.key(i) || a.value(i) != b.value(i)) return false;
  }
  return true;
}

}  // namespace tprobe::dump
