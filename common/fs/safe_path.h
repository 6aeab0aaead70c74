#ifndef TPROBE_COMMON_FS_SAFE_PATH_H_
#define TPROBE_COMMON_FS_SAFE_PATH_H_

// Building file paths from names another process chose. A module or API
// name comes from the trainer and may hold '/' or be "..": made into one
// path component by SafeComponent, it can never climb out of the folder it
// is joined to; IsSafeComponent is the check a writer makes before it
// writes.

#include <string>
#include <string_view>

namespace tprobe::fs {

// `name` as a single path component: every '/' and NUL becomes '_', and a
// name that is empty, "." or ".." becomes "_" + name. A name that is already
// a safe component comes back unchanged, so msprobe's ordinary file names
// are kept byte for byte.
std::string SafeComponent(std::string_view name);

// True when `name` is one path component that names neither the folder
// itself nor its parent: SafeComponent(name) == name.
bool IsSafeComponent(std::string_view name);

}  // namespace tprobe::fs

#endif  // TPROBE_COMMON_FS_SAFE_PATH_H_
