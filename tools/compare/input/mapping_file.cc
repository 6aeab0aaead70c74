// The mapping files, read as yaml.safe_load reads them (mapping_file.h).

#include "tools/compare/input/mapping_file.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

namespace tprobe::compare {
namespace {

// PyYAML's resolvers of plain scalars (YAML 1.1), matched whole.
const std::regex& BoolPattern() {
  static const std::regex re(
      "yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|"
      "OFF");
  return re;
}
const std::regex& IntPattern() {
  static const std::regex re(
      "[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|"
      "[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+");
  return re;
}
const std::regex& FloatPattern() {
  static const std::regex re(
      "[-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+][0-9]+)?|"
      "\\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|"
      "[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*|"
      "[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN)");
  return re;
}

bool IsNull(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// `s` without the blanks, line breaks and a "---" before and after it.
std::string Trimmed(std::string s) {
  if (s.starts_with("---")) s.erase(0, 3);
  s.erase(0, s.find_first_not_of(" \t\r\n"));
  s.erase(s.find_last_not_of(" \t\r\n") + 1);
  return s;
}

// `s` without '_' and its sign; `negative` says which sign it had.
std::string Unsigned(std::string s, bool& negative) {
  std::erase(s, '_');
  negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.erase(0, 1);
  return s;
}

// A sexagesimal number "1:30:15" as its value in base 60.
double Sexagesimal(const std::string& s) {
  double value = 0;
  std::istringstream parts(s);
  std::string part;
  while (std::getline(parts, part, ':')) value = value * 60 + std::stod(part);
  return value;
}

// An integer as PyYAML's construct_yaml_int reads it; one past int64 and
// uint64 becomes a double (Python's int has no bound; JSON's numbers do).
Json IntValue(const std::string& text) {
  bool negative = false;
  const std::string s = Unsigned(text, negative);
  int base = 10;
  size_t skip = 0;
  if (s.starts_with("0b")) {
    base = 2, skip = 2;
  } else if (s.starts_with("0x")) {
    base = 16, skip = 2;
  } else if (s.find(':') != std::string::npos) {
    const double v = Sexagesimal(s);
    return Json(negative ? -v : v);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8, skip = 1;
  }
  uint64_t magnitude = 0;
  const char* begin = s.data() + skip;
  const char* end = s.data() + s.size();
  if (begin == end) return Json(0);  // "0b_" and the like: Python says 0
  auto [p, ec] = std::from_chars(begin, end, magnitude, base);
  if (ec == std::errc() && p == end) {
    if (!negative) return Json(magnitude);
    if (magnitude <= uint64_t{1} << 63) {
      return Json(static_cast<int64_t>(0 - magnitude));
    }
  }
  double v = 0;
  for (const char* c = begin; c != end; ++c) {
    v = v * base + (*c <= '9' ? *c - '0' : (*c | 0x20) - 'a' + 10);
  }
  return Json(negative ? -v : v);
}

Json FloatValue(const std::string& text) {
  bool negative = false;
  std::string s = Unsigned(text, negative);
  double v = 0;
  if (s == ".inf" || s == ".Inf" || s == ".INF") {
    v = std::numeric_limits<double>::infinity();
  } else if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (s.find(':') != std::string::npos) {
    v = Sexagesimal(s);
  } else {
    std::from_chars(s.data(), s.data() + s.size(), v);
  }
  return Json(negative ? -v : v);
}

// Longer plain scalars are text without a look: no bool or float is this
// long, and std::regex's recursion would run deep on a long one.
constexpr size_t kMaxNumberLength = 256;

// A plain scalar resolved as PyYAML resolves it.
Json PlainScalar(const std::string& s) {
  if (IsNull(s)) return Json();
  if (s.size() > kMaxNumberLength) return Json(s);
  if (std::regex_match(s, BoolPattern())) {
    const char c = s[0] | 0x20;
    return Json(c == 'y' || c == 't' || (c == 'o' && (s[1] | 0x20) == 'n'));
  }
  if (std::regex_match(s, IntPattern())) return IntValue(s);
  if (std::regex_match(s, FloatPattern())) return FloatValue(s);
  return Json(s);
}

// A key as json.dumps writes it: text as it is, a number or a constant
// as its JSON text.
std::string KeyText(const Json& key) {
  if (key.is_string()) return key.get<std::string>();
  if (key.is_number_float() && std::isnan(key.get<double>())) return "NaN";
  if (key.is_number_float() && std::isinf(key.get<double>())) {
    return key.get<double>() > 0 ? "Infinity" : "-Infinity";
  }
  return key.dump();
}

// What makes two keys one in a Python dict: numbers (bools among them)
// by value, text by text.
std::string Identity(const Json& key) {
  if (key.is_boolean()) return key.get<bool>() ? "n1" : "n0";
  if (key.is_number()) {
    const double v = key.get<double>();
    if (v == std::floor(v) && std::abs(v) < 1e15) {
      return "n" + std::to_string(static_cast<int64_t>(v));
    }
    return "n" + key.dump();
  }
  return (key.is_string() ? "s" : "z") + KeyText(key);
}

class Converter {
 public:
  explicit Converter(MappingFile& file) : file_(file) {}

  Status Convert(const YAML::Node& node, const std::string& pointer,
                 Json& out) {
    // An alias inside the value it names makes a cycle (safe_load builds
    // it; json.dumps refuses it).
    if (nesting_ >= kMaxNesting) {
      return Status::InvalidArgument(Where(node) + ": values nest more than " +
                                     std::to_string(kMaxNesting) +
                                     " deep, or an alias names its own "
                                     "value");
    }
    const Nested nested(nesting_);
    if (++values_ > kMaxValues) {
      return Status::InvalidArgument(Where(node) + ": more than " +
                                     std::to_string(kMaxValues) +
                                     " values (aliases repeat what they name)");
    }
    if (!node.Mark().is_null()) file_.lines[pointer] = node.Mark().line + 1;
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out = Json();
        return Status::Ok();
      case YAML::NodeType::Scalar:
        return Scalar(node, out);
      case YAML::NodeType::Sequence: {
        out = Json::array();
        for (const YAML::Node& item : node) {
          Json value;
          if (Status s = Convert(
                  item, pointer + "/" + std::to_string(out.size()), value);
              !s.ok()) {
            return s;
          }
          out.push_back(std::move(value));
        }
        return Status::Ok();
      }
      case YAML::NodeType::Map:
        return Map(node, pointer, out);
    }
    return Status::Ok();
  }

 private:
  std::string Where(const YAML::Node& node) const {
    if (node.Mark().is_null()) return file_.what;
    return file_.what + ":" + std::to_string(node.Mark().line + 1) + ":" +
           std::to_string(node.Mark().column + 1);
  }

  Status Scalar(const YAML::Node& node, Json& out) const {
    const std::string& tag = node.Tag();
    const std::string& text = node.Scalar();
    if (tag == "?") {
      out = PlainScalar(text);
    } else if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      out = text;
    } else if (tag == "tag:yaml.org,2002:null") {
      out = Json();
    } else if (tag == "tag:yaml.org,2002:bool" ||
               tag == "tag:yaml.org,2002:int" ||
               tag == "tag:yaml.org,2002:float") {
      const std::regex& pattern = tag.ends_with("bool")  ? BoolPattern()
                                  : tag.ends_with("int") ? IntPattern()
                                                         : FloatPattern();
      if (!std::regex_match(text, pattern)) {
        return Status::InvalidArgument(Where(node) + ": '" + text +
                                       "' is not a " + tag.substr(18));
      }
      out = PlainScalar(text);
    } else {
      return Status::InvalidArgument(Where(node) + ": the tag '" + tag +
                                     "' is not one yaml.safe_load takes");
    }
    return Status::Ok();
  }

  // A map's pairs in safe_load's order: those merge keys ("<<") bring in
  // first (of a list of maps, the last map's first), then its own.
  Status Pairs(const YAML::Node& node,
               std::vector<std::pair<YAML::Node, YAML::Node>>& pairs) {
    std::vector<std::pair<YAML::Node, YAML::Node>> own;
    for (const auto& pair : node) {
      const YAML::Node& key = pair.first;
      if (!(key.IsScalar() && key.Tag() == "?" && key.Scalar() == "<<")) {
        own.emplace_back(key, pair.second);
        continue;
      }
      std::vector<YAML::Node> sources;
      if (pair.second.IsMap()) {
        sources.push_back(pair.second);
      } else if (pair.second.IsSequence()) {
        for (const YAML::Node& source : pair.second) {
          if (!source.IsMap()) {
            return Status::InvalidArgument(Where(source) +
                                           ": a merge key takes maps only");
          }
          sources.insert(sources.begin(), source);
        }
      } else {
        return Status::InvalidArgument(
            Where(pair.second) + ": a merge key takes a map or a list of maps");
      }
      for (const YAML::Node& source : sources) {
        if (++depth_ > kMaxMergeDepth) {
          return Status::InvalidArgument(Where(source) +
                                         ": merge keys nest too deep");
        }
        Status s = Pairs(source, pairs);
        --depth_;
        if (!s.ok()) return s;
      }
    }
    values_ += own.size();
    if (values_ > kMaxValues) {
      return Status::InvalidArgument(Where(node) +
                                     ": merge keys bring in too many pairs");
    }
    pairs.insert(pairs.end(), own.begin(), own.end());
    return Status::Ok();
  }

  Status Map(const YAML::Node& node, const std::string& pointer, Json& out) {
    std::vector<std::pair<YAML::Node, YAML::Node>> pairs;
    if (Status s = Pairs(node, pairs); !s.ok()) return s;
    out = Json::object();
    // Python's dict takes keys equal by value as one (1, 1.0 and true): the
    // first one's text, the last one's value.
    std::map<std::string, std::string> text_of;
    for (const auto& [key_node, value_node] : pairs) {
      if (!key_node.IsScalar() && !key_node.IsNull()) {
        return Status::InvalidArgument(Where(key_node) +
                                       ": a map key must be a scalar");
      }
      Json key;
      if (key_node.IsScalar()) {
        if (Status s = Scalar(key_node, key); !s.ok()) return s;
      }
      const std::string text =
          text_of.try_emplace(Identity(key), KeyText(key)).first->second;
      Json value;
      if (Status s =
              Convert(value_node, pointer + "/" + PointerToken(text), value);
          !s.ok()) {
        return s;
      }
      out[text] = std::move(value);
    }
    return Status::Ok();
  }

  // Merge keys that bring in maps that merge again: bounded, as a file
  // of aliases can make the walk exponential.
  static constexpr int kMaxMergeDepth = 64;
  // Counts one level of nesting while it lives.
  struct Nested {
    explicit Nested(int& n) : n_(n) { ++n_; }
    ~Nested() { --n_; }
    int& n_;
  };
  static constexpr int kMaxNesting = 256;
  int nesting_ = 0;
  // Aliases that name aliases make a short file a huge value: bounded.
  static constexpr size_t kMaxValues = size_t{1} << 20;
  MappingFile& file_;
  int depth_ = 0;
  size_t values_ = 0;
};

// The first character PyYAML's reader refuses, as "LINE:COLUMN: why":
// text that is not UTF-8 (msprobe opens the file as UTF-8 text), or a
// character YAML does not print (a control character other than tab and
// the line breaks, U+FFFE, U+FFFF). Empty when there is none. yaml-cpp is
// not handed such bytes: some make it loop.
std::string Unreadable(const std::string& text) {
  int line = 1, column = 1;
  for (size_t i = 0; i < text.size(); ++column) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t length = c < 0x80       ? 1
                    : c >> 5 == 6  ? 2
                    : c >> 4 == 14 ? 3
                    : c >> 3 == 30 ? 4
                                   : 0;
    uint32_t code = length == 1   ? c
                    : length == 2 ? c & 0x1F
                    : length == 3 ? c & 0x0F
                                  : c & 0x07;
    for (size_t k = 1; k < length; ++k) {
      const auto next =
          static_cast<unsigned char>(i + k < text.size() ? text[i + k] : 0);
      if (next >> 6 != 2) length = 0;
      code = code << 6 | (next & 0x3F);
    }
    const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    const std::string at = std::to_string(line) + ":" + std::to_string(column);
    if (length == 0 || code < least[length] || code > 0x10FFFF ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      return at + ": not UTF-8 text";
    }
    const bool printable = code == 0x09 || code == 0x0A || code == 0x0D ||
                           (code >= 0x20 && code <= 0x7E) || code == 0x85 ||
                           (code >= 0xA0 && code <= 0xFFFD) || code >= 0x10000;
    if (!printable) return at + ": a character YAML does not allow";
    if (code == '\n') line += 1, column = 0;
    i += length;
  }
  return "";
}

// What the lines of `text` hold beyond comments and blanks: whether some
// line is content, and whether a document start ("---" at the start of a
// line) follows content, which makes several documents.
struct Outline {
  bool content = false;
  bool several_documents = false;
};
Outline OutlineOf(const std::string& text) {
  Outline outline;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.ends_with('\r')) line.pop_back();
    const bool marker = (line.starts_with("---") || line.starts_with("...")) &&
                        (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
    if (marker && line.starts_with("---") && outline.content) {
      outline.several_documents = true;
    }
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#' || line[0] == '%') {
      continue;
    }
    std::string rest = marker ? line.substr(3) : line;
    rest.erase(0, rest.find_first_not_of(" \t"));
    if (!rest.empty() && rest[0] != '#') outline.content = true;
  }
  return outline;
}

}  // namespace

std::string PointerToken(const std::string& key) {
  std::string token;
  for (char c : key) {
    if (c == '~') {
      token += "~0";
    } else if (c == '/') {
      token += "~1";
    } else {
      token += c;
    }
  }
  return token;
}

int MappingFile::Line(const std::string& pointer) const {
  for (std::string p = pointer;; p = p.substr(0, p.rfind('/'))) {
    if (auto it = lines.find(p); it != lines.end()) return it->second;
    if (p.empty()) return 0;
  }
}

std::string MappingFile::Where(const std::string& pointer) const {
  const int line = Line(pointer);
  return line == 0 ? what : what + ":" + std::to_string(line);
}

Result<MappingFile> ParseMappingFile(const std::string& text,
                                     const std::string& what) {
  MappingFile file;
  file.what = what;
  if (std::string why = Unreadable(text); !why.empty()) {
    return Status::InvalidArgument(what + ":" + why);
  }
  // yaml-cpp's LoadAll can loop on text after a first document that it
  // cannot read (", a"), so only the first is loaded, and a second one is
  // found by its "---".
  const Outline outline = OutlineOf(text);
  if (outline.several_documents) {
    return Status::InvalidArgument(what +
                                   ": holds several YAML documents, not one");
  }
  YAML::Node document;
  try {
    document = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        what + ":" + std::to_string(e.mark.line + 1) + ":" +
        std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (document.IsNull() && outline.content && !IsNull(Trimmed(text))) {
    return Status::InvalidArgument(what + ": no YAML value could be read");
  }
  if (Status s = Converter(file).Convert(document, "", file.value); !s.ok()) {
    return s;
  }
  return file;
}

Result<MappingFile> LoadMappingFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::InvalidArgument(path +
                                   ": cannot open: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": read failed");
  return ParseMappingFile(text.str(), path);
}

}  // namespace tprobe::compare
