#include "daemon/private_dir.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace tprobe::daemon {

Status MakePrivateDirs(const std::string& dir) {
  for (size_t pos = dir.find('/', 1);; pos = dir.find('/', pos + 1)) {
    const std::string prefix = dir.substr(0, pos);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0700) != 0 &&
        errno != EEXIST) {
      return Status::Error("cannot create directory " + prefix + ": " +
                           std::strerror(errno));
    }
    if (pos == std::string::npos) break;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Error(dir + " is not a directory");
  }
  return Status::Ok();
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace tprobe::daemon
