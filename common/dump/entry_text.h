#ifndef TPROBE_COMMON_DUMP_ENTRY_TEXT_H_
#define TPROBE_COMMON_DUMP_ENTRY_TEXT_H_

// One dump.json entry, data[name], as its final bytes. An entry is a dict of
// members ("input_args", "input_kwargs", "output", "parameters", ...); each
// member's value is kept already written in the layout of Python's
// json.dumps(indent=1) at kEntryMemberDepth, the depth members have inside
// dump.json ({"data": {name: {member: value}}}). StepTree merges entries
// member by member, and dump.json is the entries' bytes put together.
//
// Thread safety: none; one owner at a time.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/dump/json_writer.h"

namespace tprobe::dump {

// The depth of an entry's members in dump.json: the document is 0, "data"'s
// items 1, an entry's name 2.
inline constexpr int kEntryMemberDepth = 3;

class EntryText {
 public:
  EntryText() = default;
  // The members of `body`, a JSON object (anything else has no members).
  static EntryText FromJson(const Json& body);

  // Starts member `key` and returns the buffer its value is to be appended
  // to, at kEntryMemberDepth, until EndMember. The buffer is valid until the
  // next call that changes the entry.
  std::string* BeginMember(std::string_view key);
  // Ends the member begun last. A key the entry already has takes the new
  // value in its place (a dict's rule).
  void EndMember();
  // Sets member `key` to `value` (written at kEntryMemberDepth), as
  // BeginMember, append, EndMember.
  void Set(std::string_view key, std::string_view value);
  // Drops every member; the buffers keep their capacity.
  void Clear();

  size_t size() const { return members_.size(); }
  bool empty() const { return members_.empty(); }
  // The bytes the entry holds (replaced values included, until Clear).
  size_t held_bytes() const { return bytes_.size(); }
  std::string_view key(size_t i) const {
    return View(members_[i].key_begin, members_[i].key_size);
  }
  std::string_view value(size_t i) const {
    return View(members_[i].value_begin, members_[i].value_size);
  }

  // Appends the entry as dump.json holds it: "{}" when it has no members,
  // else one member a line at kEntryMemberDepth and the closing brace one
  // level out.
  void AppendTo(std::string& out) const;

  // The same members, with the same bytes, in the same order.
  friend bool operator==(const EntryText& a, const EntryText& b);

 private:
  struct Member {
    size_t key_begin;
    size_t key_size;
    size_t value_begin;
    size_t value_size;
  };

  std::string_view View(size_t begin, size_t size) const {
    return std::string_view(bytes_).substr(begin, size);
  }

  // Keys (raw, unescaped) and values, back to back; a replaced value's old
  // bytes stay unused until Clear.
  std::string bytes_;
  std::vector<Member> members_;
};

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_ENTRY_TEXT_H_
