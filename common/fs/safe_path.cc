#include "common/fs/safe_path.h"

namespace tprobe::fs {

std::string SafeComponent(std::string_view name) {
  if (name.empty() || name == "." || name == "..") {
    return "_" + std::string(name);
  }
  std::string out(name);
  for (char& c : out) {
    if (c == '/' || c == '\0') c = '_';
  }
  return out;
}

bool IsSafeComponent(std::string_view name) {
  return SafeComponent(name) == name;
}

}  // namespace tprobe::fs
