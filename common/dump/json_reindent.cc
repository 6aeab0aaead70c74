#include "common/dump/json_reindent.h"

#include <vector>

#include "common/dump/json_stream_writer.h"

namespace tprobe::dump {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLowerHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool AtEnd() {
    SkipSpace();
    return pos_ == in_.size();
  }
  // Consumes `c` (after whitespace) if it comes next.
  bool Take(char c) {
    SkipSpace();
    if (pos_ == in_.size() || in_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < in_.size() && in_[pos_] == c;
  }

  // A quoted string, returned with its quotes.
  bool String(std::string_view* token) {
    SkipSpace();
    const size_t begin = pos_;
    if (pos_ == in_.size() || in_[pos_] != '"') return false;
    ++pos_;
    while (pos_ < in_.size()) {
      const char c = in_[pos_++];
      if (c == '"') {
        *token = in_.substr(begin, pos_ - begin);
        return true;
      }
      if (c < 0x20 || c > 0x7e) return false;
      if (c != '\\') continue;
      if (pos_ == in_.size()) return false;
      const char e = in_[pos_++];
      if (e == 'u') {
        if (in_.size() - pos_ < 4) return false;
        for (int i = 0; i < 4; ++i) {
          if (!IsLowerHex(in_[pos_++])) return false;
        }
      } else if (e != '"' && e != '\\' && e != 'n' && e != 'r' && e != 't' &&
                 e != 'b' && e != 'f') {
        return false;
      }
    }
    return false;
  }

  // A number or a literal.
  bool Scalar(std::string_view* token) {
    SkipSpace();
    for (std::string_view word :
         {"null", "true", "false", "NaN", "Infinity", "-Infinity"}) {
      if (in_.substr(pos_, word.size()) == word) {
        *token = in_.substr(pos_, word.size());
        pos_ += word.size();
        return true;
      }
    }
    const size_t begin = pos_;
    Accept('-');
    if (Accept('0')) {
    } else if (!Digits()) {
      return false;
    }
    if (Accept('.') && !Digits()) return false;
    if (Accept('e') || Accept('E')) {
      if (!Accept('+')) Accept('-');
      if (!Digits()) return false;
    }
    *token = in_.substr(begin, pos_ - begin);
    return true;
  }

 private:
  void SkipSpace() {
    while (pos_ < in_.size() && (in_[pos_] == ' ' || in_[pos_] == '\n' ||
                                 in_[pos_] == '\r' || in_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool Accept(char c) {
    if (pos_ == in_.size() || in_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  // One or more digits.
  bool Digits() {
    const size_t begin = pos_;
    while (pos_ < in_.size() && IsDigit(in_[pos_])) ++pos_;
    return pos_ > begin;
  }

  std::string_view in_;
  size_t pos_ = 0;
};

// Reads one value of `reader` into `writer`; the containers are tracked in
// `dicts` (true for a dict), so nesting costs no native stack.
bool Copy(Reader& reader, JsonStreamWriter& writer) {
  std::vector<bool> dicts;
  while (true) {
    // A value.
    std::string_view token;
    if (reader.Take('[')) {
      writer.BeginList();
      dicts.push_back(false);
      if (!reader.Take(']')) continue;  // its first item
      writer.End();
      dicts.pop_back();
    } else if (reader.Take('{')) {
      writer.BeginDict();
      dicts.push_back(true);
      if (reader.Peek('"')) {
        if (!reader.String(&token) || !reader.Take(':')) return false;
        writer.KeyToken(token);
        continue;  // its first value
      }
      if (!reader.Take('}')) return false;
      writer.End();
      dicts.pop_back();
    } else if (reader.Peek('"')) {
      if (!reader.String(&token)) return false;
      writer.Token(token);
    } else {
      if (!reader.Scalar(&token)) return false;
      writer.Token(token);
    }
    // After a value: the next item, or the ends of the containers it closes.
    while (true) {
      if (dicts.empty()) return true;
      if (reader.Take(',')) {
        if (dicts.back()) {
          if (!reader.String(&token) || !reader.Take(':')) return false;
          writer.KeyToken(token);
        }
        break;
      }
      if (!reader.Take(dicts.back() ? '}' : ']')) return false;
      writer.End();
      dicts.pop_back();
    }
  }
}

}  // namespace

bool ReindentPythonJson(std::string_view in, int depth, std::string& out) {
  const size_t size = out.size();
  Reader reader(in);
  JsonStreamWriter writer;
  writer.Reset(&out, depth);
  if (Copy(reader, writer) && reader.AtEnd()) return true;
  out.resize(size);
  return false;
}

}  // namespace tprobe::dump
