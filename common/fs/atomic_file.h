#ifndef TPROBE_COMMON_FS_ATOMIC_FILE_H_
#define TPROBE_COMMON_FS_ATOMIC_FILE_H_

// Files that appear whole: every file tprobe writes (the JSON files, .npy
// tensors, hard links to identical tensors, the importer's placed files) is
// made under a temporary name beside it and renamed over its final name, so
// a reader sees either the old file or the complete new one, never half of
// one. Written once here for the daemon, the CLI and their tests.
//
// Temporary names end in a marker and the writer's pid ("NAME.tmp<pid>"),
// so that a daemon restarted after a crash can tell its predecessor's
// leftovers (daemon/process/crash_cleanup.h).
//
// Thread safety: may be called concurrently for different paths.

#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tprobe::fs {

// path + marker + this process's pid: "dump.json.tmp1234".
std::string TempPath(const std::string& path, std::string_view marker = ".tmp");

// Makes `tmp` with `make` (which writes, links or copies it; given `tmp`),
// then renames it over `path`. A `tmp` left by an earlier run is removed
// first. On failure the temporary is removed and `path` is untouched; the
// error is make's, or names the rename and the system error.
Status ReplaceFile(const std::string& path, const std::string& tmp,
                   const std::function<Status(const std::string&)>& make);

// Creates the new file `tmp` for writing and returns its descriptor: never
// through a symlink, never an existing file (O_CREAT | O_EXCL |
// O_NOFOLLOW), mode 0640 whatever the umask (msprobe's mode for data
// files). The caller closes it. The error names `tmp`.
Result<int> CreateFile(const std::string& tmp);

// Writes `bytes` to `path` through TempPath(path) and a rename (mode 0640).
Status WriteFileAtomic(const std::string& path, std::string_view bytes);

}  // namespace tprobe::fs

#endif  // TPROBE_COMMON_FS_ATOMIC_FILE_H_
