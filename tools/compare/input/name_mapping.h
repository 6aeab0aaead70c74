#ifndef TPROBE_TOOLS_COMPARE_INPUT_NAME_MAPPING_H_
#define TPROBE_TOOLS_COMPARE_INPUT_NAME_MAPPING_H_

// `--mapping FILE`: names in the target that stand for other names in the
// baseline (a cross-framework pair, a renamed module). The file is a JSON
// object or a YAML map of one level, "target name: baseline name" per line
// ('#' comments, optional quotes), read as yaml.safe_load reads it
// (mapping_file.h). A key may be a whole row name or an
// entry name (every row of the entry then maps) or any dotted prefix.
//
// Thread safety: immutable once loaded; Map may be called concurrently.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tools/compare/input/mapping_file.h"

namespace tprobe::compare {

class NameMapping {
 public:
  NameMapping() = default;

  // Reads `path`; an InvalidArgument error names the file and the line of
  // a YAML error or of a value that is no name.
  static Result<NameMapping> Load(const std::string& path);
  // From text (tests); `what` names it in errors.
  static Result<NameMapping> Parse(const std::string& text,
                                   const std::string& what);
  // From a mapping file already read.
  static Result<NameMapping> FromFile(const MappingFile& file);
  // From "key, value" pairs made in code (a layer mapping's data mapping).
  static NameMapping Of(
      std::vector<std::pair<std::string, std::string>> entries);

  // `name` with its longest mapped dotted prefix replaced; `name` itself
  // when no prefix is mapped.
  std::string Map(const std::string& name) const;

  // The value of exactly `name`, or null.
  const std::string* Find(const std::string& name) const;
  // Every "key: value" in file order (a key given twice: its first place,
  // its last value).
  const std::vector<std::pair<std::string, std::string>>& entries() const {
    return entries_;
  }

  bool empty() const { return map_.empty(); }
  size_t size() const { return map_.size(); }

 private:
  void Set(std::string key, std::string value);

  std::map<std::string, std::string, std::less<>> map_;
  std::vector<std::pair<std::string, std::string>> entries_;
};

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_INPUT_NAME_MAPPING_H_
