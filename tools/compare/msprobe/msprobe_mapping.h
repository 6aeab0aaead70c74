#ifndef TPROBE_TOOLS_COMPARE_MSPROBE_MSPROBE_MAPPING_H_
#define TPROBE_TOOLS_COMPARE_MSPROBE_MSPROBE_MAPPING_H_

// msprobe 26.2's mapping options for a MindSpore target against a PyTorch
// baseline (`msprobe compare -cm/-am/-dm`): the name a target row is
// looked up by in the baseline, its "compare key".
//
//   - Cell mapping (`--cell-mapping FILE`): only rows of a forward or
//     backward call, or a parameters_grad row, take part; the others are
//     left unpaired. The first "Cell" of the name becomes "Module". The
//     file maps cell paths ("fc1.Dense: fc1.Linear", the part of the name
//     between the first dot and ".forward."): a whole path that is a key
//     maps to its value; otherwise each key found in the path, in file
//     order, is replaced (its first occurrence) by its value.
//   - API mapping (`--api-mapping [FILE]`): "Mint.x" becomes "Torch.x"
//     and "MintFunctional.x" "Functional.x"; another API in msprobe's
//     built-in table (MsToPtApi, "Functional.add" to "Torch.add") is
//     replaced by its PyTorch API, in every place of the name, as msprobe's
//     str.replace. FILE (ApiArgMappings) then rewrites the
//     rows of each API it lists that both dumps call: a row whose place
//     is listed takes the baseline API's name and the paired place, every
//     other row of that API ends in "abandoned" and pairs with nothing.
//   - Data mapping (`--data-mapping FILE`): a file of whole row names,
//     "target row: baseline row"; a row not in it keeps its name. With it
//     msprobe pairs rows whatever their dtypes.
//
// As in msprobe, one kind applies: API mapping over cell mapping over data
// mapping. The file is a flat YAML (or JSON) map, read by NameMapping.
//
// Thread safety: immutable once made; Key may be called concurrently.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tools/compare/input/name_mapping.h"

namespace tprobe::compare {

struct Dump;

// One item of msprobe's `-am FILE` (its api_mapping.yaml): a MindSpore API
// ("Mint.add", the first two parts of a row name), the PyTorch API it
// stands for ("Torch.add"), and per state the places paired: `args` (the
// rows ".input.N", keyword arguments included), `output`, `parameters`,
// `parameters_grad`, each from the file's ms_X and pt_X lists, position
// by position.
struct ApiArgMapping {
  std::string ms_api;
  std::string pt_api;
  // term ("args", "output", "parameters", "parameters_grad") -> (ms, pt)
  // places, as the file writes them ("0", "1").
  std::vector<
      std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>
      places;
  int line = 0;  // where the item starts in the file

  // The pairs of `term`; empty when the file lists none.
  const std::vector<std::pair<std::string, std::string>>& Places(
      std::string_view term) const;
};

// msprobe's api_mapping.yaml: a YAML list of maps, one per API,
//
//   - ms_api: Mint.sub
//     pt_api: Torch.sub
//     ms_args: [0, 1]        # or a block list of "- 0" lines
//     pt_args: [1, 0]
//     ms_output: [0]
//     pt_output: [0]
//
// with optional ms_parameters/pt_parameters and ms_parameters_grad/
// pt_parameters_grad, '#' comments and quotes; or the same as a JSON list;
// read as msprobe's yaml.safe_load reads it (mapping_file.h). Items are
// kept in file order (a later item of the same API wins, as in msprobe).
//
// Returns an InvalidArgument error naming the file and line for YAML that
// does not parse, a value not of this form, an item without ms_api or
// pt_api, an unknown
// key, or ms_X and pt_X lists of different lengths (msprobe skips such an
// item with a warning, or fails on it later).
Result<std::vector<ApiArgMapping>> ParseApiArgMappings(const std::string& text,
                                                       const std::string& what);
Result<std::vector<ApiArgMapping>> LoadApiArgMappings(const std::string& path);
// The same from a mapping file already read.
Result<std::vector<ApiArgMapping>> ApiArgMappingsOf(const MappingFile& file);

class MsprobeMapping {
 public:
  enum class Kind { kNone, kApi, kCell, kData };

  MsprobeMapping() = default;

  // `path` read as a cell or data mapping; errors name the file and line.
  static Result<MsprobeMapping> Load(Kind kind, const std::string& path);
  static MsprobeMapping Api();
  // --api-mapping FILE: the built-in mapping, then FILE's items.
  static MsprobeMapping Api(std::vector<ApiArgMapping> items);
  // From a map already read (tests).
  static MsprobeMapping Of(Kind kind, NameMapping map);

  // The compare key of the target row `name`; nullopt when msprobe leaves
  // the row unpaired.
  std::optional<std::string> Key(const std::string& name) const;
  // The same for a row of the dump entry `entry` (its name's prefix,
  // "Mint.add.0.forward"), which a FILE's items need.
  std::optional<std::string> Key(const std::string& name,
                                 std::string_view entry) const;

  // This mapping for one dump pair: FILE's items whose MindSpore API the
  // target calls and whose PyTorch API the baseline calls (the others do
  // nothing, as in msprobe).
  MsprobeMapping ForPair(const Dump& target, const Dump& baseline) const;
  bool has_api_items() const { return !api_items_.empty(); }

  Kind kind() const { return kind_; }
  bool empty() const { return kind_ == Kind::kNone; }
  // Data mapping pairs rows of any dtypes.
  bool ignores_dtypes() const { return kind_ == Kind::kData; }

 private:
  std::optional<std::string> CellKey(const std::string& name) const;
  std::string ApiKey(const std::string& name, std::string_view entry) const;

  Kind kind_ = Kind::kNone;
  NameMapping map_;
  std::vector<ApiArgMapping> api_items_;
};

// msprobe's dtype equivalence across frameworks: a MindSpore dtype and a
// PyTorch one of the same family ("Float32" and "torch.float16" are both
// floats; Int*, UInt* and torch.int*, torch.uint* are ints; bools;
// complexes) are equivalent. Two dtypes of one framework are not made
// equivalent here.
bool CrossFrameworkDtypesMatch(const std::string& a, const std::string& b);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_MSPROBE_MSPROBE_MAPPING_H_
