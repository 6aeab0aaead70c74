#include "common/dump/tree_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/fs/atomic_file.h"

namespace tprobe::dump {

Status MakeDirs(const std::string& dir) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0750) == 0) {
      ::chmod(path.c_str(), 0750);  // msprobe's mode, whatever the umask
    } else if (errno != EEXIST) {
      return Status::Error("cannot create directory " + path + ": " +
                           std::strerror(errno));
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Error(dir + " is not a directory");
  }
  return Status::Ok();
}

Status WriteStepTree(const std::string& dir, const StepTree& tree) {
  if (Status s = MakeDirs(dir); !s.ok()) return s;
  if (tree.debug_level()) {
    const std::pair<const char*, std::string> files[] = {
        {"debug.json", tree.DumpJson()},
        {"tprobe.json", PythonJsonDumps(tree.AccountingDocument())},
    };
    for (const auto& [name, bytes] : files) {
      Status s = fs::WriteFileAtomic(dir + "/" + name, bytes);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
  const std::pair<const char*, std::string> files[] = {
      {"dump.json", tree.DumpJson()},
      {"stack.json", tree.StackJson()},
      {"construct.json", tree.ConstructJson()},
      {"tprobe.json", PythonJsonDumps(tree.AccountingDocument())},
  };
  for (const auto& [name, bytes] : files) {
    Status s = fs::WriteFileAtomic(dir + "/" + name, bytes);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace tprobe::dump
