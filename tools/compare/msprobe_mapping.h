#ifndef TPROBE_TOOLS_COMPARE_MSPROBE_MAPPING_H_
#define TPROBE_TOOLS_COMPARE_MSPROBE_MAPPING_H_

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
//   - API mapping (`--api-mapping`): "Mint.x" becomes "Torch.x" and
//     "MintFunctional.x" "Functional.x". msprobe's own table of other
//     MindSpore APIs and a user file of API and argument lists are not
//     read (tprobe compare refuses a FILE).
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

#include "common/status.h"
#include "tools/compare/name_mapping.h"

namespace tprobe::compare {

class MsprobeMapping {
 public:
  enum class Kind { kNone, kApi, kCell, kData };

  MsprobeMapping() = default;

  // `path` read as a cell or data mapping; errors name the file and line.
  static Result<MsprobeMapping> Load(Kind kind, const std::string& path);
  static MsprobeMapping Api();
  // From a map already read (tests).
  static MsprobeMapping Of(Kind kind, NameMapping map);

  // The compare key of the target row `name`; nullopt when msprobe leaves
  // the row unpaired.
  std::optional<std::string> Key(const std::string& name) const;

  Kind kind() const { return kind_; }
  bool empty() const { return kind_ == Kind::kNone; }
  // Data mapping pairs rows of any dtypes.
  bool ignores_dtypes() const { return kind_ == Kind::kData; }

 private:
  std::optional<std::string> CellKey(const std::string& name) const;

  Kind kind_ = Kind::kNone;
  NameMapping map_;
};

// msprobe's dtype equivalence across frameworks: a MindSpore dtype and a
// PyTorch one of the same family ("Float32" and "torch.float16" are both
// floats; Int*, UInt* and torch.int*, torch.uint* are ints; bools;
// complexes) are equivalent. Two dtypes of one framework are not made
// equivalent here.
bool CrossFrameworkDtypesMatch(const std::string& a, const std::string& b);

}  // namespace tprobe::compare

#endif  // TPROBE_TOOLS_COMPARE_MSPROBE_MAPPING_H_
