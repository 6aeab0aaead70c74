#include "common/fs/safe_path.h"

#include <filesystem>

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

bool IsUnder(const std::string& root, const std::string& path) {
  namespace stdfs = std::filesystem;
  const stdfs::path r = stdfs::path(root).lexically_normal();
  const stdfs::path p = stdfs::path(path).lexically_normal();
  if (r.is_absolute() != p.is_absolute()) return false;
  auto ri = r.begin();
  auto pi = p.begin();
  for (; ri != r.end(); ++ri, ++pi) {
    // A trailing '/' of root normalises to an empty last element.
    if (ri->empty() && std::next(ri) == r.end()) break;
    if (pi == p.end() || *ri != *pi) return false;
  }
  return true;
}

}  // namespace tprobe::fs
