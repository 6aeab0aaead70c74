// libFuzzer target: the mapping files of `tprobe compare` (--mapping,
// --cell-mapping, --data-mapping, --api-mapping FILE, --layer-mapping), as
// tools/compare/input/mapping_file.cc reads them with yaml-cpp into the
// JSON value that yaml.safe_load would give, and as each of the three
// readers then takes that value apart. Whatever the text, each must return
// a value or an error, and every line it names must be one of the text's.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "tools/compare/input/mapping_file.h"
#include "tools/compare/input/name_mapping.h"
#include "tools/compare/msprobe/layer_mapping.h"
#include "tools/compare/msprobe/msprobe_mapping.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace compare = tprobe::compare;
  using tprobe::fuzz::Check;
  const std::string text(reinterpret_cast<const char*>(data), size);
  tprobe::Result<compare::MappingFile> file =
      compare::ParseMappingFile(text, "fuzz.yaml");
  if (!file.ok()) {
    Check(file.status().message().starts_with("fuzz.yaml"),
          "a YAML error names the file");
    return 0;
  }
  const int lines =
      static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (const auto& [pointer, line] : file->lines) {
    Check(line >= 1 && line <= lines, "a value starts on a line of the text");
  }
  // The value prints, as the reports would print a name from it.
  (void)file->value.dump(-1, ' ', false,
                         compare::Json::error_handler_t::replace);
  (void)compare::NameMapping::FromFile(*file);
  (void)compare::ApiArgMappingsOf(*file);
  (void)compare::LayerMapping::FromFile(*file);
  return 0;
}
