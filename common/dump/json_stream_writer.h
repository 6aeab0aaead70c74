#ifndef TPROBE_COMMON_DUMP_JSON_STREAM_WRITER_H_
#define TPROBE_COMMON_DUMP_JSON_STREAM_WRITER_H_

// Writes one JSON value in the layout of Python's json.dumps(indent=1), value
// by value, with no tree in between: the bytes are those PythonJsonDumps
// (common/dump/json_writer.h) writes for the same value, for a value that sits
// `depth` levels deep in its document. The daemon renders each dump.json
// entry with it straight from the entry's value stream.
//
// Usage: Reset, then exactly one value (a scalar, or a Begin*, its items and
// End); in a dict every value is preceded by its Key. The caller keeps the
// calls well nested; a misuse is a bug and asserts.
//
// Thread safety: none; one writer per thread. It keeps its stack between
// values, so reusing it costs no allocation once warm.

#include <cassert>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/dump/json_writer.h"

namespace tprobe::dump {

class JsonStreamWriter {
 public:
  // The next value is appended to `*out` (not cleared), `depth` deep.
  void Reset(std::string* out, int depth) {
    out_ = out;
    depth_ = depth;
    open_.clear();
  }

  void Null() { Token("null"); }
  void Bool(bool v) { Token(v ? "true" : "false"); }
  void Int(int64_t v) { Integer(v); }
  void Uint(uint64_t v) { Integer(v); }
  void Float(double v) {
    BeforeValue();
    AppendPythonFloat(*out_, v);
  }
  void String(std::string_view v) {
    BeforeValue();
    AppendPythonString(*out_, v);
  }
  // A scalar already in its final form (a number, a literal, or a quoted
  // string escaped as AppendPythonString escapes it).
  void Token(std::string_view token) {
    BeforeValue();
    out_->append(token);
  }

  void BeginList() { Open('[', false); }
  void BeginDict() { Open('{', true); }
  // The key of the next value of the innermost dict.
  void Key(std::string_view key) {
    BeforeKey();
    AppendPythonString(*out_, key);
    out_->append(": ");
  }
  // The same for a key already quoted and escaped.
  void KeyToken(std::string_view quoted) {
    BeforeKey();
    out_->append(quoted);
    out_->append(": ");
  }
  // Closes the innermost list or dict.
  void End() {
    assert(!open_.empty() && !open_.back().key_written);
    const Level level = open_.back();
    open_.pop_back();
    if (!level.empty) NewlineIndent(Depth());
    out_->push_back(level.dict ? '}' : ']');
  }

  // How many lists and dicts are open.
  size_t open_count() const { return open_.size(); }

 private:
  struct Level {
    bool dict;
    bool empty;        // no item yet
    bool key_written;  // a dict's key waits for its value
  };

  // The depth of the innermost open container's items (or of the value).
  int Depth() const { return depth_ + static_cast<int>(open_.size()); }

  void NewlineIndent(int depth) {
    out_->push_back('\n');
    out_->append(static_cast<size_t>(depth), ' ');
  }

  void BeforeKey() {
    assert(!open_.empty() && open_.back().dict && !open_.back().key_written);
    Level& level = open_.back();
    if (!level.empty) out_->push_back(',');
    level.empty = false;
    level.key_written = true;
    NewlineIndent(Depth());
  }

  // A list item starts on its own line; a dict's value follows its key.
  void BeforeValue() {
    if (open_.empty()) return;
    Level& level = open_.back();
    if (level.dict) {
      assert(level.key_written);
      level.key_written = false;
      return;
    }
    if (!level.empty) out_->push_back(',');
    level.empty = false;
    NewlineIndent(Depth());
  }

  void Open(char bracket, bool dict) {
    BeforeValue();
    out_->push_back(bracket);
    open_.push_back(Level{dict, true, false});
  }

  template <typename I>
  void Integer(I v) {
    BeforeValue();
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof(buf), v);
    out_->append(buf, res.ptr);
  }

  std::string* out_ = nullptr;
  int depth_ = 0;
  std::vector<Level> open_;
};

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_JSON_STREAM_WRITER_H_
