// The mapping files of `tprobe compare` (--mapping, --cell-mapping,
// --data-mapping, --api-mapping FILE, --layer-mapping), read as msprobe
// reads them: with Python's yaml.safe_load, of which JSON is a part. yaml-cpp
// parses the text, and the value becomes the JSON that json.dumps would
// make of what safe_load returns, which each reader then takes apart.

#ifndef TPROBE_TOOLS_COMPARE_INPUT_MAPPING_FILE_H_
#define TPROBE_TOOLS_COMPARE_INPUT_MAPPING_FILE_H_

#include <map>
#include <string>

#include "common/status.h"
#include "tools/compare/input/python_json.h"

namespace tprobe::compare {

struct MappingFile {
  // safe_load's value as JSON: YAML 1.1's plain scalars resolved as
  // PyYAML resolves them (null, ~, yes/no/on/off, 0x1F, 1_000, .inf, ...;
  // a timestamp stays text), quoted and block scalars as text, anchors and
  // merge keys ("<<") followed, map keys as json.dumps writes them ("1",
  // "true", "null"), a key given twice (or keys Python holds equal, as 1
  // and true) taking its last value in its first place. An empty file is
  // null. yaml-cpp is laxer than PyYAML in places: it reads "a: b: c" as
  // a map of "a" to "b: c", which safe_load refuses.
  Json value;
  // The file, as errors name it.
  std::string what;
  // The 1-based line where the value at a JSON pointer ("", "/0/ms_args")
  // starts.
  std::map<std::string, int> lines;

  // The line of the value at `pointer`, or of the nearest value that holds
  // it with a known line; 0 when none has one.
  int Line(const std::string& pointer) const;
  // "WHAT:LINE" of the value at `pointer` ("WHAT" for line 0).
  std::string Where(const std::string& pointer) const;
};

// Parses `text`; `what` names it in errors. An error (InvalidArgument)
// names the line and column of a YAML syntax error, text that is not
// UTF-8 or holds a character YAML does not allow, several YAML documents,
// a map key that is no scalar, a tag safe_load does not take, an alias
// inside the value it names, or a value too large or too deep.
Result<MappingFile> ParseMappingFile(const std::string& text,
                                     const std::string& what);

// Reads and parses the file at `path`; an error names it and the cause.
Result<MappingFile> LoadMappingFile(const std::string& path);

// A JSON pointer's token for `key` ("~" and "/" escaped).
std::string PointerToken(const std::string& key);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_INPUT_MAPPING_FILE_H_
